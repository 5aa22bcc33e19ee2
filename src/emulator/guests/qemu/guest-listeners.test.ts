import { describe, expect, it } from "vitest";
import { tablesListenOn } from "./guest-listeners.ts";

// As a Debian 12 guest writes them: the agent on 0.0.0.0:899, sshd-like on [::]:22, a server on
// 127.0.0.1:8080, a connection to 899 that is not a listener.
const tcp = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:0383 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 15342 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 16000 1 0000000000000000 100 0 0 10 0
   2: 0F02000A:0383 0202000A:D6F2 01 00000000:00000000 00:00000000 00000000     0        0 16001 1 0000000000000000 20 4 30 10 -1
`;
const tcp6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 15000 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 15001 1 0000000000000000 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:1F92 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 15002 1 0000000000000000 100 0 0 10 0
`;

describe("tablesListenOn", () => {
  it("finds listeners on any address, in either table", () => {
    expect(tablesListenOn([tcp, tcp6], 899)).toBe(true);
    expect(tablesListenOn([tcp, tcp6], 22)).toBe(true);
  });

  it("does not count loopback listeners, which the guest's network does not reach", () => {
    expect(tablesListenOn([tcp, tcp6], 8080)).toBe(false);
    expect(tablesListenOn([tcp, tcp6], 8081)).toBe(false);
    expect(tablesListenOn([tcp, tcp6], 8082)).toBe(false);
  });

  it("does not count connections, only listeners", () => {
    expect(tablesListenOn([tcp.replace(/^ {3}0: .*\n/m, "")], 899)).toBe(false);
  });
});
