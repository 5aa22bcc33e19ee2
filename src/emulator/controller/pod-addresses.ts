// Pod IPs from each node's pod CIDR (10.244.<node index>.0/24), handed out and given back.
export class PodAddresses {
  private readonly used = new Set<string>();

  allocate(nodeIndex: number): string {
    for (let host = 2; host < 255; host++) {
      const address = `10.244.${nodeIndex}.${host}`;
      if (!this.used.has(address)) {
        this.used.add(address);
        return address;
      }
    }
    // A /24 holds 253 pods; a node's pod limit (110 by default) keeps this from being reached.
    return `10.244.${nodeIndex}.254`;
  }

  release(address: string): void {
    this.used.delete(address);
  }
}
