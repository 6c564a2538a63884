// GET /account, POST /account/revoke and POST /account/signout-others: list authorized applications and revoke one's
// tokens and consent; see how many other browsers are signed in and sign them out.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import type { RequestContext, Route } from "../http/router.ts";
import { readParams } from "../http/body.ts";
import { redirect } from "../http/respond.ts";
import { invalidRequest } from "../oauth/errors.ts";
import { audit } from "../oauth/audit.ts";
import { csrfToken, verifyCsrf } from "./csrf.ts";
import { page } from "./page.ts";
import { readSession } from "./session.ts";
import { renderAccount } from "./account.ts";
import { signOutCsrf } from "./sign_in_page.ts";
import { SESSION_ENDED } from "./auth_routes.ts";

const REVOKE = "revoke";
/** Signs the "access revoked" notice of the redirect after a revocation, for the session that made it. */
const REVOKED_NOTICE = "revoked-notice";
const SIGN_OUT_OTHERS = "signout-others";
/** Signs the "signed out everywhere else" notice, for the session that asked for it. */
const OTHERS_ENDED_NOTICE = "others-ended-notice";

async function accountEndpoint(deps: Deps, request: Request, ctx: RequestContext): Promise<Response> {
  const signedIn = await readSession(deps, request);
  if (!signedIn) return redirect("/signin?next=%2Faccount", 303);
  const consents = await deps.store.consents.listForUser(signedIn.user.id);
  const apps = await Promise.all(consents.map(async (c) => ({
    clientId: c.clientPublicId,
    name: c.clientName,
    scope: c.scope,
    grantedAt: c.grantedAt,
    csrf: await csrfToken(deps, signedIn.cookieValue, { purpose: REVOKE, binding: c.clientPublicId }),
  })));
  // The notice names the application only when the link came from this session's own revocation: a crafted
  // /account?revoked=ID must not announce a revocation that never happened or reveal another client's name.
  const revokedId = ctx.url.searchParams.get("revoked") ?? undefined;
  const genuine = revokedId !== undefined &&
    await verifyCsrf(deps, signedIn.cookieValue, {
      token: ctx.url.searchParams.get("notice") ?? undefined,
      purpose: REVOKED_NOTICE,
      binding: revokedId,
    });
  const revoked = genuine ? (await deps.store.clients.findByClientId(revokedId))?.name : undefined;
  const othersEnded = await verifyCsrf(deps, signedIn.cookieValue, {
    token: ctx.url.searchParams.get("ended") ?? undefined,
    purpose: OTHERS_ENDED_NOTICE,
  });
  return page(renderAccount({
    username: signedIn.user.name ?? signedIn.user.username,
    apps,
    signOutCsrf: await signOutCsrf(deps, signedIn.cookieValue),
    revoked,
    otherSessions: await deps.store.sessions.countOthers(signedIn.user.id, signedIn.sessionHash, nowSeconds(deps.clock)),
    signOutOthersCsrf: await csrfToken(deps, signedIn.cookieValue, { purpose: SIGN_OUT_OTHERS }),
    othersEnded,
  }));
}

/** Ends the user's sessions in every other browser (a shared computer left signed in, a lost phone). */
async function signOutOthersEndpoint(deps: Deps, request: Request, ctx: RequestContext): Promise<Response> {
  const form = await readParams(request, deps.config.maxBodyBytes);
  const signedIn = await readSession(deps, request);
  if (!signedIn) return redirect(`/signin?${new URLSearchParams({ next: "/account", session: SESSION_ENDED })}`, 303);
  if (!(await verifyCsrf(deps, signedIn.cookieValue, { token: form.csrf, purpose: SIGN_OUT_OTHERS }))) {
    throw invalidRequest("The form has expired; reload the page and try again", { status: 403 });
  }
  const sessions = await deps.store.sessions.endOthers(signedIn.user.id, signedIn.sessionHash);
  await audit(deps, "other_sessions_ended", { userId: signedIn.user.id, ip: ctx.clientIp, detail: { sessions } });
  const ended = await csrfToken(deps, signedIn.cookieValue, { purpose: OTHERS_ENDED_NOTICE });
  return redirect(`/account?${new URLSearchParams({ ended })}`, 303);
}

async function revokeAccessEndpoint(deps: Deps, request: Request, ctx: RequestContext): Promise<Response> {
  const form = await readParams(request, deps.config.maxBodyBytes);
  const signedIn = await readSession(deps, request);
  // The session ended while the page was open: sign in and see the list again (nothing was revoked), not a dead end.
  if (!signedIn) return redirect(`/signin?${new URLSearchParams({ next: "/account", session: SESSION_ENDED })}`, 303);
  const clientId = form.client_id ?? "";
  if (!(await verifyCsrf(deps, signedIn.cookieValue, { token: form.csrf, purpose: REVOKE, binding: clientId }))) {
    throw invalidRequest("The form has expired; reload the page and try again", { status: 403 });
  }
  const client = await deps.store.clients.findByClientId(clientId);
  if (!client) throw invalidRequest("Unknown application");
  const tokens = await deps.store.tokens.revokeUserClient(signedIn.user.id, client.id, nowSeconds(deps.clock));
  await audit(deps, "access_revoked_by_user", {
    clientId: client.clientId,
    userId: signedIn.user.id,
    ip: ctx.clientIp,
    detail: { tokens },
  });
  const notice = await csrfToken(deps, signedIn.cookieValue, { purpose: REVOKED_NOTICE, binding: client.clientId });
  return redirect(`/account?${new URLSearchParams({ revoked: client.clientId, notice })}`, 303);
}

/** Routes of the account page. */
export function accountRoutes(deps: Deps): Route[] {
  return [
    { method: "GET", path: "/account", surface: "html", handler: (req, ctx) => accountEndpoint(deps, req, ctx) },
    { method: "POST", path: "/account/revoke", surface: "html", handler: (req, ctx) => revokeAccessEndpoint(deps, req, ctx) },
    {
      method: "POST",
      path: "/account/signout-others",
      surface: "html",
      handler: (req, ctx) => signOutOthersEndpoint(deps, req, ctx),
    },
  ];
}
