// The slice of autocannon's API the benchmark uses (the package ships no type declarations).
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest | undefined;
  }

  interface AutocannonClient extends EventEmitter {
    on(event: "response", listener: (statusCode: number, resBytes: number, responseTimeMs: number) => void): this;
  }

  interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: AutocannonRequest[];
    setupClient?: (client: AutocannonClient) => void;
    verifyBody?: (body: string) => boolean;
  }

  interface AutocannonResult {
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    duration: number;
  }

  interface AutocannonInstance extends EventEmitter {
    stop(): void;
  }

  function autocannon(
    options: AutocannonOptions,
    callback: (error: Error | null, result: AutocannonResult) => void,
  ): AutocannonInstance;

  export default autocannon;
  export type { AutocannonClient, AutocannonInstance, AutocannonOptions, AutocannonRequest, AutocannonResult };
}
