// Test helper: a runcmd line that starts a TCP echo server in a guest. Python, because that is what
// stock cloud images ship (node is on none of them, so a guest has none either).

/** A shell command (for runcmd or the console) that serves an echo on host:port in the background. */
export function echoServerCommand(port: number, host = "0.0.0.0"): string {
  const program = [
    "import socketserver as s",
    "s.ThreadingTCPServer.allow_reuse_address = True",
    "E = type('E', (s.BaseRequestHandler,), {'handle': lambda h: [h.request.sendall(d) for d in iter(lambda: h.request.recv(65536), b'')]})",
    `s.ThreadingTCPServer(('${host}', ${port}), E).serve_forever()`,
  ].join("; ");
  return `nohup python3 -c "${program}" >/dev/null 2>&1 &`;
}
