// Test fixture: the boot contract of the grading agent as user data: the
// agent's files written by cloud-init as root, its systemd unit, and the spec's runcmd lines in their
// order, with a tiny Python stand-in for the agent.

// Listens on 899, proves on every connection what it runs as and that it read the key, and tells
// systemd it is ready only after a marker file exists (so a caller can see it waited for READY=1).
export const agentProgram = `import os, socket, time
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("0.0.0.0", 899))
server.listen(8)
print("lab-agent 2.0.0 listening on 0.0.0.0:899", flush=True)
time.sleep(0.3)
open("/run/agent-ready-sent", "w").close()
notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
notify.connect(os.environ["NOTIFY_SOCKET"])
notify.send(b"READY=1")
while True:
    conn, _ = server.accept()
    key = open("/etc/lab-agent/key").read().strip()
    conn.sendall(("uid=%d key=%d\\n" % (os.getuid(), len(key))).encode())
    conn.close()
`;

export const agentUnit = `[Unit]
Description=Lab Console grading agent
Before=serial-getty@ttyS0.service

[Service]
Type=notify
ExecStart=/usr/bin/python3 /usr/local/lib/lab-agent/lab_agent.py
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
`;

const indent = (text: string) =>
  text
    .trimEnd()
    .split("\n")
    .map((line) => `      ${line}`)
    .join("\n");

// The spec's delivery (write_files not deferred, root-owned; runcmd in the spec's order), plus a unit
// whose ExecStart does not exist and a package install.
export const contractUserData = (extraRuncmd: string[] = []) => `#cloud-config
packages: [git]
write_files:
  - path: /usr/local/lib/lab-agent/lab_agent.py
    owner: root:root
    permissions: "0755"
    content: |
${indent(agentProgram)}
  - path: /etc/lab-agent/key
    owner: root:root
    permissions: "0600"
    content: "${"ab".repeat(32)}\\n"
  - path: /etc/systemd/system/lab-agent.service
    permissions: "0644"
    content: |
${indent(agentUnit)}
  - path: /etc/systemd/system/missing.service
    content: |
      [Unit]
      Description=Needs a binary the image lacks
      [Service]
      Type=notify
      ExecStart=/usr/bin/no-such-binary --serve
  - path: /etc/gitconfig
    content: |
      [init]
          defaultBranch = main
runcmd:
  - '[ -x /usr/bin/python3 ] || echo "lab-agent: not started: this image has no /usr/bin/python3, so its sessions cannot be graded"'
  - systemctl daemon-reload
  - systemctl enable --now lab-agent.service; echo "enable exited $? ready-sent=$(test -e /run/agent-ready-sent && echo yes || echo no)"
  - systemctl restart serial-getty@ttyS0.service
  - systemctl start missing.service; echo "missing exited $?"
${extraRuncmd.map((line) => `  - ${JSON.stringify(line)}`).join("\n")}
`;
