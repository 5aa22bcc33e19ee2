// The egress a lab file declares (network.egress): what the loader accepts, what it refuses and how it
// says so. Each refusal names the line and the field, as the other lab-file problems do.
import { describe, expect, it } from "vitest";
import { defaultVmSizes } from "./load-labs.ts";
import { defaultClusterCidrs, parseLab } from "./parse-lab.ts";

function labWithNetwork(network: string): string {
  return [
    "id: mirrors",
    "title: Mirrors",
    "vm:",
    "  size: small",
    "  image: quay.io/containerdisks/fedora:41",
    "network:",
    ...network.split("\n").map((line) => `  ${line}`),
    "",
  ].join("\n");
}

/** The problems as "line: message"; the network part starts on line 7 (`network:` is line 6). */
function problemsOf(network: string, clusterCidrs = defaultClusterCidrs): string[] {
  const parsed = parseLab(labWithNetwork(network), defaultVmSizes, { clusterCidrs });
  if (parsed.ok) return [];
  return parsed.problems.map((problem) => `${problem.line}: ${problem.message}`);
}

function egressOf(network: string, clusterCidrs = defaultClusterCidrs) {
  const parsed = parseLab(labWithNetwork(network), defaultVmSizes, { clusterCidrs });
  if (!parsed.ok) throw new Error(parsed.problems.map((problem) => problem.message).join("\n"));
  return parsed.lab.network;
}

describe("network.egress in a lab file", () => {
  it("is absent from a lab that declares none, so the lab gets DNS and nothing else", () => {
    const parsed = parseLab(
      "id: plain\ntitle: Plain\nvm:\n  size: small\n  image: quay.io/containerdisks/fedora:41\n",
      defaultVmSizes,
    );
    expect(parsed.ok && parsed.lab.network).toBeUndefined();
    expect(egressOf("egress: []")).toBeUndefined();
  });

  it("reads ranges with their ports, TCP unless the rule says UDP", () => {
    const network = egressOf(
      [
        "egress:",
        "  - cidr: 203.0.113.0/24",
        "    ports: [80, 443]",
        "  - cidr: 198.51.100.53/32",
        "    protocol: UDP",
        "    ports: [53]",
        "  - cidr: 2001:db8:1::/48",
        "    except: [2001:db8:1:ff::/64]",
        "    ports: [443]",
      ].join("\n"),
    );
    expect(network).toEqual({
      egress: [
        { cidr: "203.0.113.0/24", except: [], protocol: "TCP", ports: [80, 443] },
        { cidr: "198.51.100.53/32", except: [], protocol: "UDP", ports: [53] },
        { cidr: "2001:db8:1::/48", except: ["2001:db8:1:ff::/64"], protocol: "TCP", ports: [443] },
      ],
    });
  });

  it("takes the whole Internet only with the metadata, loopback and cluster ranges carved out", () => {
    const everywhere = [
      "egress:",
      "  - cidr: 0.0.0.0/0",
      "    except: [0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 169.254.0.0/16, 172.16.0.0/12, 192.168.0.0/16]",
      "    ports: [443]",
    ].join("\n");
    expect(problemsOf(everywhere)).toEqual([]);
    expect(egressOf(everywhere)?.egress[0]?.except).toHaveLength(7);
  });

  it.each([
    [
      "a host name",
      "egress:\n  - cidr: mirror.example.edu\n    ports: [443]",
      [
        '8: network.egress[0].cidr: must be an address range like 203.0.113.0/24 or 2001:db8::/48, not "mirror.example.edu" (NetworkPolicies know no host names: use the addresses the name resolves to)',
      ],
    ],
    [
      "an address without a prefix length",
      "egress:\n  - cidr: 203.0.113.10\n    ports: [443]",
      [
        '8: network.egress[0].cidr: must be an address range like 203.0.113.0/24 or 2001:db8::/48, not "203.0.113.10" (NetworkPolicies know no host names: use the addresses the name resolves to)',
      ],
    ],
    [
      "host bits after the prefix",
      "egress:\n  - cidr: 203.0.113.7/24\n    ports: [443]",
      [
        "8: network.egress[0].cidr: 203.0.113.7/24 has bits set after the prefix; the range is 203.0.113.0/24",
      ],
    ],
    [
      "the metadata endpoint itself",
      "egress:\n  - cidr: 169.254.169.254/32\n    ports: [80]",
      [
        "8: network.egress[0].cidr: 169.254.169.254/32 is inside 169.254.0.0/16 (link-local: the cloud metadata endpoint 169.254.169.254 hands out the node's cloud credentials), which no lab may reach",
      ],
    ],
    [
      "everything, IPv4",
      "egress:\n  - cidr: 0.0.0.0/0\n    ports: [443]",
      [
        "8: network.egress[0].cidr: 0.0.0.0/0 includes addresses no lab may reach: 0.0.0.0/8 (\"this network\"), 127.0.0.0/8 (loopback), 169.254.0.0/16 (link-local: the cloud metadata endpoint 169.254.169.254 hands out the node's cloud credentials), 100.100.100.200/32 (Alibaba Cloud's metadata endpoint); use a narrower range, or list them under except",
      ],
    ],
    [
      "everything, IPv6",
      "egress:\n  - cidr: ::/0\n    except: [fe80::/10, ::ffff:0:0/96, ::1/128]\n    ports: [443]",
      [
        "8: network.egress[0].cidr: ::/0 includes addresses no lab may reach: fd00:ec2::254/128 (AWS's IPv6 metadata endpoint); use a narrower range, or list them under except",
      ],
    ],
    [
      "the metadata range excepted in a range that does not hold it",
      "egress:\n  - cidr: 203.0.113.0/24\n    except: [169.254.0.0/16]\n    ports: [443]",
      ["9: network.egress[0].except[0]: 169.254.0.0/16 is not inside 203.0.113.0/24"],
    ],
    [
      "an except as wide as the range",
      "egress:\n  - cidr: 203.0.113.0/24\n    except: [203.0.113.0/24]\n    ports: [443]",
      ["9: network.egress[0].except[0]: 203.0.113.0/24 is not inside 203.0.113.0/24"],
    ],
    [
      "an IPv6 except in an IPv4 range",
      "egress:\n  - cidr: 203.0.113.0/24\n    except: ['2001:db8::/64']\n    ports: [443]",
      ["9: network.egress[0].except[0]: 2001:db8::/64 is not inside 203.0.113.0/24"],
    ],
    [
      "no ports",
      "egress:\n  - cidr: 203.0.113.0/24",
      [
        "8: network.egress[0].ports: is required: list the ports, e.g. [80, 443] (a rule without ports would open every port)",
      ],
    ],
    [
      "an empty port list",
      "egress:\n  - cidr: 203.0.113.0/24\n    ports: []",
      [
        "9: network.egress[0].ports: list at least one port, e.g. [80, 443] (a rule without ports would open every port)",
      ],
    ],
    [
      "a port out of range",
      "egress:\n  - cidr: 203.0.113.0/24\n    ports: [443, 65536, 0]",
      [
        "9: network.egress[0].ports[1]: must be a port from 1 to 65535",
        "9: network.egress[0].ports[2]: must be a port from 1 to 65535",
      ],
    ],
    [
      "a port as text",
      "egress:\n  - cidr: 203.0.113.0/24\n    ports: [https]",
      ['9: network.egress[0].ports[0]: must be a number, not the text "https"'],
    ],
    [
      "ICMP",
      "egress:\n  - cidr: 203.0.113.0/24\n    protocol: ICMP\n    ports: [1]",
      ["9: network.egress[0].protocol: must be TCP or UDP"],
    ],
    [
      "a misspelt field",
      "egress:\n  - cidr: 203.0.113.0/24\n    port: [443]",
      [
        "8: network.egress[0].ports: is required: list the ports, e.g. [80, 443] (a rule without ports would open every port)",
        "9: network.egress[0].port: unknown field",
      ],
    ],
    ["ingress, which labs cannot open", "ingress: []", ["7: network.ingress: unknown field"]],
  ])("refuses %s", (_what, network, expected) => {
    expect(problemsOf(network)).toEqual(expected);
  });

  it("refuses the cluster's own ranges, which the server is told with LAB_CLUSTER_CIDRS", () => {
    const tenNet = "egress:\n  - cidr: 10.20.0.0/16\n    ports: [443]";
    expect(problemsOf(tenNet)).toEqual([
      "8: network.egress[0].cidr: 10.20.0.0/16 is inside 10.0.0.0/8, which this server takes for the cluster's own addresses (LAB_CLUSTER_CIDRS): the VM would reach the console, the API server and other students' VMs. If the range is outside the cluster, set LAB_CLUSTER_CIDRS to the cluster's own pod, service and node ranges",
    ]);
    // A campus mirror in private address space, on a cluster whose ranges the operator named.
    expect(problemsOf(tenNet, ["10.244.0.0/16", "10.96.0.0/12", "192.168.10.0/24"])).toEqual([]);
    const broad = "egress:\n  - cidr: 10.0.0.0/8\n    except: [10.244.0.0/16]\n    ports: [443]";
    expect(problemsOf(broad, ["10.244.0.0/16", "10.96.0.0/12"])).toEqual([
      "8: network.egress[0].cidr: 10.0.0.0/8 includes the cluster's own addresses 10.96.0.0/12 (LAB_CLUSTER_CIDRS): the VM would reach the console, the API server and other students' VMs; use a narrower range, or list them under except",
    ]);
  });
});
