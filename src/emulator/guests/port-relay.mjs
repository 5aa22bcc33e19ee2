// The port relay: runs inside a guest's sandbox (Node built-ins only, no build step) with the emulator's
// IPC channel. For each request it connects to a TCP port on the guest's loopback and hands the connected
// socket itself back over the channel, so the emulator then talks to the guest's server directly and no
// byte passes through here. The guest has no other network, so this is how port-forward reaches it.
import net from "node:net";

if (!process.send) {
  console.error("port-relay: no IPC channel; it must be started by the emulator");
  process.exit(2);
}

process.on("message", (message) => {
  if (!isConnectRequest(message)) return;
  const { id, port } = message;
  const socket = net.connect({ host: "127.0.0.1", port });
  let answered = false;
  socket.once("connect", () => {
    answered = true;
    // Sending a socket closes this process's copy of it.
    process.send({ type: "connected", id }, socket);
  });
  socket.on("error", (error) => {
    if (answered) return;
    answered = true;
    process.send({ type: "failed", id, code: error.code ?? "EIO", message: error.message });
  });
});

// The emulator is gone: nothing can use this relay any more.
process.on("disconnect", () => process.exit(0));

function isConnectRequest(message) {
  return (
    typeof message === "object" &&
    message !== null &&
    message.type === "connect" &&
    Number.isInteger(message.id) &&
    Number.isInteger(message.port) &&
    message.port > 0 &&
    message.port < 65536
  );
}
