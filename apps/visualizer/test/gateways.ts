import type { GatewayParts, RunningGateway } from "@switchboard/gateway";
import { Harness, testConfig } from "../../gateway/test/harness";

export { waitFor } from "../../gateway/test/harness";

/** The gateway tests' harness, started from flags: gateways and mock engines on loopback; `close` stops them all. */
export class Rig extends Harness {
  gatewayWith(flags: string[], parts: GatewayParts = {}): RunningGateway {
    return this.gateway(testConfig(flags), parts);
  }
}
