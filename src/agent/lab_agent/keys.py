"""The session key and the signatures: the agent's trust boundary (docs/agent.md, "Signatures").

A request counts as the BFF's only if its MAC, made with the session's key over method, target,
nonce and body, matches, and its nonce was not seen before; server.py asks this module before it
does anything else. Every answer is signed back over the request's nonce, so nothing without the key
can pass for the agent either, and the key never crosses the wire.

Trusts: the key file only when it is a regular file of root's, mode 0600 (the student cannot read or
replace it), never through a symbolic link. Everything else that arrives is unverified until its
MAC matches here.
"""

import errno
import hashlib
import hmac
import os
import stat
import threading
from collections import OrderedDict

from config import FILE_CHUNK_BYTES, FRAME_MAC_BYTES
from http_error import HttpError, invalid


# A key file larger than this is not a key: reading stops here, whatever the file is.
KEY_FILE_BYTES = 256
MINIMUM_KEY_LENGTH = 16


def read_key(path):
    """Opened without following links, only a regular file, never more than KEY_FILE_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        reason = "it is a symbolic link" if error.errno == errno.ELOOP else error.strerror
        raise HttpError(503, "no_key", "The agent has no key yet (%s: %s)." % (path, reason), False)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise HttpError(503, "no_key", "The key file %s is not a regular file." % path, False)
        if os.geteuid() == 0 and (info.st_uid != 0 or info.st_mode & 0o077):
            raise HttpError(503, "no_key", "The key file %s must be root's, mode 0600." % path, False)
        data = os.read(fd, KEY_FILE_BYTES + 1)
    finally:
        os.close(fd)
    key = data.decode("utf-8", "replace").strip()
    if len(data) > KEY_FILE_BYTES or len(key) < MINIMUM_KEY_LENGTH:
        raise HttpError(503, "no_key", "The key file %s holds no usable key." % path, False)
    return key.encode("utf-8")


def claim_pad(key, nonce):
    """The one-time pad a claim's new key is sealed with: only the holder of the current key has it."""
    return hmac.new(key, ("lab-agent-claim:v1\n" + nonce).encode("utf-8"), hashlib.sha256).digest()


def unseal_key(key, nonce, sealed):
    try:
        raw = bytes.fromhex(sealed) if isinstance(sealed, str) else b""
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise invalid(['"key" must be 64 hexadecimal digits: a sealed 32-byte key.'])
    return bytes(a ^ b for a, b in zip(raw, claim_pad(key, nonce))).hex().encode("utf-8")


def replace_key(path, key):
    """Writes the new key beside the old one and renames it over: a crash leaves one whole key file."""
    folder = os.path.dirname(path) or "."
    temporary = os.path.join(folder, ".key.%d" % os.getpid())
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, key + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(temporary, path)


def mac(key, lines):
    return hmac.new(key, "\n".join(lines).encode("utf-8"), hashlib.sha256).hexdigest()


def request_mac(key, method, target, nonce, body):
    return mac(key, ["lab-agent-request:v2", method, target, nonce, hashlib.sha256(body).hexdigest()])


def answer_mac(key, nonce, status, body):
    return mac(key, ["lab-agent-response:v2", nonce, str(status), hashlib.sha256(body).hexdigest()])


def stream_request_mac(key, method, target, nonce, size):
    """A streamed body cannot be hashed before it is read: the request signs its size instead."""
    return mac(key, ["lab-agent-stream-request:v1", method, target, nonce, str(size)])


def stream_answer_mac(key, nonce, status, size):
    return mac(key, ["lab-agent-stream-response:v1", nonce, str(status), str(size)])


def frame_mac(key, kind, nonce, index, data):
    """Each frame of a streamed body carries the MAC of its bytes, its place and its request."""
    prefix = ("%s\n%s\n%d\n" % (kind, nonce, index)).encode("utf-8")
    return hmac.new(key, prefix + data, hashlib.sha256).digest()


def framed_length(size):
    frames = (size + FILE_CHUNK_BYTES - 1) // FILE_CHUNK_BYTES
    return size + frames * FRAME_MAC_BYTES


class NonceMemory:
    def __init__(self, size):
        self.size = size
        self.seen = OrderedDict()
        self.lock = threading.Lock()

    def first_use(self, nonce):
        with self.lock:
            if nonce in self.seen:
                return False
            self.seen[nonce] = True
            if len(self.seen) > self.size:
                self.seen.popitem(last=False)
            return True
