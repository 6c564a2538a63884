// Every state-changing form of the pages, each opened in a browser ready to submit it, for tables over all of them.
import { openTestApp } from "./test_app.ts";
import { authorizePath, formFields, signIn, testBrowser, type TestBrowser } from "./browser_session.ts";

/** One form as its page filled it in, in the browser that was shown it. */
export interface OpenForm {
  browser: TestBrowser;
  /** The form's hidden fields (CSRF token included) plus what the user types or clicks. */
  fields: Record<string, string>;
  /** Whether the change the form asks for has happened, judged from the store or another browser. */
  changed(): Promise<boolean>;
  /** The fields to submit after `page` was the answer: the same, unless that page renewed the form. */
  refill?(page: string): Record<string, string>;
}

export interface FormRoute {
  path: string;
  /** A fresh app with the form open in a browser. */
  open(): Promise<OpenForm>;
  /** The status of the submitted form when it took effect. */
  done: number;
  /** The status without a CSRF token: 403, except sign-in, which shows its form again (400). */
  withoutToken: number;
}

/** True when `browser` holds a session: /account shows the page rather than sending it to sign in. */
export async function isSignedIn(browser: TestBrowser): Promise<boolean> {
  return (await browser.get("/account")).status === 200;
}

async function signInForm(): Promise<OpenForm> {
  const t = await openTestApp();
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  const page = await (await browser.get("/signin?next=%2Faccount")).text();
  const typed = { username: user.username, password: user.password };
  const fields = { ...formFields(page, "/signin"), ...typed };
  // A sign-in form refused for its token comes back with a new pre-session cookie and the token that goes with it.
  const refill = (again: string) => again.includes('action="/signin"') ? { ...formFields(again, "/signin"), ...typed } : fields;
  return { browser, fields, changed: () => isSignedIn(browser), refill };
}

/** A signed-in browser on the consent page of a fresh client; `consented` says whether the user's consent is stored. */
async function onConsentPage() {
  const t = await openTestApp();
  const seeded = await t.seed.client({ name: "Field notes app" });
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  await signIn(browser, user);
  const page = await (await browser.get(authorizePath(seeded.clientId))).text();
  const consented = async () => (await t.store.consents.find(user.id, seeded.client.id)) !== undefined;
  return { t, user, browser, page, consented };
}

async function consentForm(): Promise<OpenForm> {
  const { browser, page, consented } = await onConsentPage();
  return { browser, fields: { ...formFields(page, "/oauth/authorize"), decision: "approve" }, changed: consented };
}

async function revokeForm(): Promise<OpenForm> {
  const { browser, page, consented } = await onConsentPage();
  const approved = await browser.post("/oauth/authorize", { ...formFields(page, "/oauth/authorize"), decision: "approve" });
  if (approved.status !== 303 || !(await consented())) throw new Error("the consent was not stored");
  const account = await (await browser.get("/account")).text();
  return { browser, fields: formFields(account, "/account/revoke"), changed: async () => !(await consented()) };
}

async function signOutOthersForm(): Promise<OpenForm> {
  const t = await openTestApp();
  const user = await t.seed.user();
  const [browser, other] = [testBrowser(t.app), testBrowser(t.app)];
  await signIn(other, user);
  await signIn(browser, user);
  const account = await (await browser.get("/account")).text();
  return { browser, fields: formFields(account, "/account/signout-others"), changed: async () => !(await isSignedIn(other)) };
}

async function signOutForm(): Promise<OpenForm> {
  const t = await openTestApp();
  const browser = testBrowser(t.app);
  await signIn(browser, await t.seed.user());
  const account = await (await browser.get("/account")).text();
  return { browser, fields: formFields(account, "/signout"), changed: async () => !(await isSignedIn(browser)) };
}

/** The forms of sign-in, consent and the account page (the demo's two are tested with the demo). */
export const FORM_ROUTES: readonly FormRoute[] = [
  { path: "/signin", open: signInForm, done: 303, withoutToken: 400 },
  { path: "/oauth/authorize", open: consentForm, done: 303, withoutToken: 403 },
  { path: "/account/revoke", open: revokeForm, done: 303, withoutToken: 403 },
  { path: "/account/signout-others", open: signOutOthersForm, done: 303, withoutToken: 403 },
  { path: "/signout", open: signOutForm, done: 303, withoutToken: 403 },
];
