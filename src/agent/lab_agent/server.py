"""HTTP: reads each request within its limits, verifies its signature (keys.py) before anything
else, routes it to agent.py, and signs the answer.

Trusts: nothing from the connection until the request's MAC matches: before that it answers only
unsigned errors, and it bounds what it reads (head, body, time, connections) so that an unsigned
client cannot hold the agent up.
"""

import hmac
import json
import re
import select
import socket
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from config import (
    BODY_BYTES,
    FILE_CHUNK_BYTES,
    FILE_IDLE_SECONDS,
    FRAME_MAC_BYTES,
    TERMINAL_FRAME_BYTES,
    TERMINAL_HEAD_BYTES,
    VERSION,
)
from http_error import HttpError, invalid
from keys import (
    answer_mac,
    frame_mac,
    framed_length,
    read_key,
    request_mac,
    stream_answer_mac,
    stream_request_mac,
)
from terminals import TerminalClosed


CONNECTIONS = 32
# Reading a request (line, headers, body) must not take longer than this, in all.
REQUEST_READ_SECONDS = 10
# The request line and headers together; the body has BODY_BYTES of its own.
HEAD_BYTES = 16 * 1024
AUTHORIZATION = re.compile(r"^Lab-Agent-HMAC nonce=([0-9a-f]{32}), mac=([0-9a-f]{64})$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "lab-agent/" + VERSION
    sys_version = ""
    agent = None  # set by main()

    def setup(self):
        super().setup()
        # One deadline for the whole request, however slowly it trickles in: then reading stops.
        self.read_too_slow = False
        self.read_deadline = threading.Timer(REQUEST_READ_SECONDS, self.stop_reading)
        self.read_deadline.daemon = True
        self.read_deadline.start()
        self.rfile = HeadLimit(self.rfile, HEAD_BYTES)

    def stop_reading(self):
        self.read_too_slow = True
        try:
            self.connection.shutdown(socket.SHUT_RD)
        except OSError:
            pass

    def finish(self):
        self.read_deadline.cancel()
        super().finish()

    def do_GET(self):
        self.handle_request()

    def do_POST(self):
        self.handle_request()

    def do_PUT(self):
        self.handle_request()

    def do_DELETE(self):
        self.handle_request()

    def handle_request(self):
        started = time.monotonic()
        self.close_connection = True
        self.nonce = None
        self.key = None
        # Once a 101 went out the connection carries frames: an HTTP answer there would be garbage.
        self.upgraded = False
        try:
            self.authenticate()
            answer = self.route()
            if answer is not None:
                self.send_json(200, answer)
        except HttpError as error:
            if not self.upgraded:
                self.send_error_body(error)
        except Exception:
            self.agent.log("lab-agent: %s %s failed: %s" % (self.command, self.path, traceback.format_exc()))
            if not self.upgraded:
                self.send_error_body(HttpError(500, "internal", "The agent failed; its log has the details."))
        self.agent.log(
            "%s %s %s %dms"
            % (self.command, self.path, getattr(self, "status", "-"), (time.monotonic() - started) * 1000)
        )

    def authenticate(self):
        match = AUTHORIZATION.match(self.headers.get("Authorization", ""))
        if not match:
            raise HttpError(401, "unauthenticated", "This agent answers signed requests only.", False)
        # An upload's body is read after this, frame by frame, each frame signed on its own.
        streamed = self.command == "PUT" and self.path.split("?", 1)[0] == "/v1/files"
        if streamed:
            self.body = b""
            self.stream_size = self.read_stream_size()
        else:
            self.body = self.read_body()
        key = read_key(self.agent.config["keyFile"])
        nonce, presented = match.group(1), match.group(2)
        if streamed:
            expected = stream_request_mac(key, self.command, self.path, nonce, self.stream_size)
        else:
            expected = request_mac(key, self.command, self.path, nonce, self.body)
        if not hmac.compare_digest(expected, presented):
            raise HttpError(401, "unauthenticated", "The request is not signed with this VM's key.", False)
        if not self.agent.nonces.first_use(nonce):
            raise HttpError(401, "unauthenticated", "This request was seen before.", False)
        self.key, self.nonce = key, nonce

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise HttpError(411, "invalid", "Send the body with a Content-Length.", False)
        length = self.headers.get("Content-Length", "0")
        if not re.fullmatch(r"\d{1,12}", length):
            raise HttpError(400, "invalid", "Content-Length is not a number.", False)
        if int(length) > BODY_BYTES:
            raise HttpError(413, "too_large", "The body is over %d bytes." % BODY_BYTES, False)
        body = self.rfile.read(int(length))
        if len(body) < int(length):
            if self.read_too_slow:
                message = "The request did not arrive within %d s." % REQUEST_READ_SECONDS
                raise HttpError(408, "invalid", message, False)
            raise HttpError(400, "invalid", "The body ended early.", False)
        self.read_deadline.cancel()
        return body

    def read_stream_size(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise HttpError(411, "invalid", "Send the body with a Content-Length.", False)
        size = self.headers.get("Lab-Agent-File-Size", "")
        length = self.headers.get("Content-Length", "")
        if not re.fullmatch(r"\d{1,12}", size) or not re.fullmatch(r"\d{1,12}", length):
            raise HttpError(400, "invalid", "An upload needs Lab-Agent-File-Size and Content-Length.", False)
        return int(size)

    def handle_expect_100(self):
        # Not yet: an upload says 100 Continue only once its path and the disk are known to be good,
        # so a refused file is never sent (Files.upload).
        return True

    def content_length(self):
        return int(self.headers.get("Content-Length", "0"))

    def query(self, name):
        values = parse_qs(urlsplit(self.path).query).get(name)
        return values[0] if values else None

    def stream_for(self, seconds):
        """A file takes as long as it needs, as long as it never stalls for `seconds`."""
        self.read_deadline.cancel()
        self.connection.settimeout(seconds)

    def send_continue(self):
        self.stream_for(FILE_IDLE_SECONDS)
        self.send_response_only(100)
        self.end_headers()

    def upgrade(self, protocol):
        """
        Answers 101: from here the connection carries `protocol` for as long as it lasts, without the
        request's deadline or timeout (a terminal may sit idle for hours; its own idle limit counts the
        BFF's frames, pings included). Returns the bytes the head's reader already took from the socket
        past the head: frames the BFF sent without waiting for the 101.
        """
        self.read_deadline.cancel()
        self.connection.settimeout(None)
        self.upgraded = True
        self.status = 101
        self.send_response_only(101)
        self.send_header("Upgrade", protocol)
        self.send_header("Connection", "Upgrade")
        self.send_header("Lab-Agent-MAC", answer_mac(self.key, self.nonce, 101, b""))
        try:
            self.end_headers()
        except OSError:
            raise TerminalClosed()
        # Non-blocking for one read: the buffer's bytes if it has any, b"" rather than a wait if not.
        self.connection.setblocking(False)
        try:
            return self.rfile.read1(TERMINAL_HEAD_BYTES + TERMINAL_FRAME_BYTES) or b""
        except OSError:
            return b""
        finally:
            self.connection.setblocking(True)

    def read_frames(self, size):
        """The upload's bytes, frame by frame, each checked against its MAC before it is used."""
        index = 0
        left = size
        while left > 0:
            length = min(left, FILE_CHUNK_BYTES)
            try:
                frame = self.rfile.read(FRAME_MAC_BYTES + length)
            except OSError:
                frame = b""
            if len(frame) < FRAME_MAC_BYTES + length:
                raise HttpError(408, "invalid", "The upload stopped arriving.")
            data = frame[FRAME_MAC_BYTES:]
            expected = frame_mac(self.key, "lab-agent-frame:v1", self.nonce, index, data)
            if not hmac.compare_digest(expected, frame[:FRAME_MAC_BYTES]):
                message = "Frame %d of the upload is not signed with this VM's key." % index
                raise HttpError(400, "invalid", message)
            yield data
            index += 1
            left -= length

    def send_frames(self, size, source):
        """A 200 whose body is `size` bytes from `source` in signed frames; a short source cuts it."""
        self.stream_for(FILE_IDLE_SECONDS)
        self.status = 200
        self.send_response_only(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(framed_length(size)))
        self.send_header("Lab-Agent-File-Size", str(size))
        self.send_header("Connection", "close")
        self.send_header("Lab-Agent-MAC", stream_answer_mac(self.key, self.nonce, 200, size))
        self.end_headers()
        index = 0
        left = size
        while left > 0:
            data = source.read(min(left, FILE_CHUNK_BYTES))
            if not data:
                return  # closing early: the BFF finds frames missing and drops the download
            try:
                signature = frame_mac(self.key, "lab-agent-answer-frame:v1", self.nonce, index, data)
                self.wfile.write(signature + data)
            except OSError:
                return  # the BFF left
            index += 1
            left -= len(data)

    def route(self):
        methods = self.agent.routes().get(self.path.split("?", 1)[0])
        if methods is None:
            raise HttpError(404, "not_found", "There is no %s here." % self.path)
        handler = methods.get(self.command)
        if handler is None:
            allowed = ", ".join(methods)
            raise HttpError(405, "method_not_allowed", "%s answers %s only." % (self.path, allowed))
        return handler(self)

    def json_body(self):
        try:
            return json.loads(self.body.decode("utf-8"))
        except ValueError:
            raise invalid(["The request body is not valid JSON."])

    def client_gone(self):
        """True once the client closed its side; it sends nothing after its request."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def send_error_body(self, error):
        body = {"error": {"code": error.code, "message": error.message}}
        self.send_json(error.status, body, signed=error.signed)

    def send_json(self, status, value, signed=True):
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        self.status = status
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        if status == 401:
            self.send_header("WWW-Authenticate", "Lab-Agent-HMAC")
        if signed and self.key is not None:
            self.send_header("Lab-Agent-MAC", answer_mac(self.key, self.nonce, status, body))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass  # The client left; there is nobody to tell.

    def log_message(self, format, *args):
        pass  # One line per request is written by handle_request; nothing of its content.


class HeadLimit:
    """The request line and headers may take HEAD_BYTES in all; past that they read as ended."""

    def __init__(self, raw, limit):
        self.raw = raw
        self.left = limit

    def readline(self, size=-1):
        if self.left <= 0:
            return b""
        line = self.raw.readline(self.left if size < 0 else min(size, self.left))
        self.left -= len(line)
        return line

    def __getattr__(self, name):
        return getattr(self.raw, name)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, handler):
        self.connection_slots = threading.BoundedSemaphore(CONNECTIONS)
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        # A flood of idle connections must not starve the BFF's: the excess is closed at once.
        if not self.connection_slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self.connection_slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connection_slots.release()

    def handle_error(self, request, client_address):
        pass  # A client that broke its connection is not the agent's failure.
