# The framing of the manager's answers to its clients (guest-commands.py): records of a kind byte
# (o: stdout, e: stderr, c: exit code), a decimal length, ':' and the bytes.


class Reply:
    """A client's answer, streamed as records (stdout, stderr, then the exit code) as it is produced."""

    def __init__(self, conn):
        self.conn = conn

    def send(self, kind, payload):
        if self.conn is None:
            return
        try:
            self.conn.sendall(kind + str(len(payload)).encode() + b":" + payload)
        except OSError:
            self.conn.close()
            self.conn = None

    def out(self, text):
        self.send(b"o", text.encode("utf-8", "surrogateescape"))
        return self

    def err(self, text):
        self.send(b"e", text.encode("utf-8", "surrogateescape"))
        return self

    def done(self, code):
        self.send(b"c", str(code).encode())
        if self.conn is not None:
            self.conn.close()
            self.conn = None
