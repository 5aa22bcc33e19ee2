"""Files in and out of the home (docs/files.md).

The agent is root, so it never opens a file of the home itself: a helper, this same program run as
the student (--file-helper), does, and the data goes through its pipes. What the student cannot read
stays unread, and what is written is the student's own, owned by the student.

Trusts: nothing in the home: paths are checked to stay inside it (links included) by the helper, as
the student, and the helper's answers are parsed as untrusted lines. The data frames are signed and
checked frame by frame (keys.py).
"""

import errno
import json
import os
import pwd
import stat
import subprocess
import sys
import tempfile

from config import CHECK_PATH, FILE_BYTES, FILE_CHUNK_BYTES, FILE_PATH_LENGTH
from http_error import HttpError, invalid
from keys import framed_length
from run_as import resolve_run_as


def parse_file_path(text):
    """A path relative to the home, as its parts; `..` and absolute paths are refused outright."""
    if not isinstance(text, str) or not 1 <= len(text) <= FILE_PATH_LENGTH or "\0" in text:
        message = "The path must be 1 to %d characters, relative to the home folder." % FILE_PATH_LENGTH
        raise HttpError(400, "invalid_path", message)
    if text.startswith("/") or text.startswith("~"):
        raise HttpError(400, "invalid_path", 'The path "%s" must be relative to the home folder.' % text)
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise HttpError(400, "invalid_path", 'The path "%s" leaves the home folder ("..").' % text)
    if not parts:
        raise HttpError(400, "invalid_path", 'The path "%s" names no file.' % text)
    return parts


def inside_home(root, path, shown):
    """The real path of `path` (links followed), which must still lie in the home."""
    real = os.path.realpath(path)
    if real != root and not real.startswith(root + os.sep):
        raise HttpError(403, "outside_home", "%s leads outside the home folder (a symbolic link)." % shown)
    return real


def os_error(error, shown):
    if error.errno == errno.ENOENT:
        return HttpError(404, "no_such_file", "There is no file %s in the home folder." % shown)
    if error.errno in (errno.EACCES, errno.EPERM):
        return HttpError(403, "permission_denied", "The student may not open %s." % shown)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return HttpError(507, "disk_full", "The VM's disk is full: %s could not be written." % shown)
    if error.errno == errno.EISDIR:
        return HttpError(400, "not_a_file", "%s is a folder, not a file." % shown)
    return HttpError(500, "file_failed", "%s: %s" % (shown, error.strerror))


def megabytes(size):
    return "%.1f MiB" % (size / 1024 / 1024)


def helper_report(value):
    sys.stdout.buffer.write(json.dumps(value).encode("utf-8") + b"\n")
    sys.stdout.buffer.flush()


def helper_read(home, text):
    parts = parse_file_path(text)
    root = os.path.realpath(home)
    real = inside_home(root, os.path.join(root, *parts), text)
    try:
        # O_NONBLOCK: a FIFO planted under the name must not hang the download.
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise os_error(error, text)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise HttpError(400, "not_a_file", "%s is %s, not a file to download." % (text, what))
    with os.fdopen(fd, "rb", buffering=0) as file:
        if info.st_size > FILE_BYTES:
            sizes = (text, megabytes(info.st_size), megabytes(FILE_BYTES))
            raise HttpError(413, "too_large", "%s is %s; files up to %s can be downloaded." % sizes)
        helper_report({"size": info.st_size})
        left = info.st_size
        while left > 0:
            chunk = file.read(min(left, FILE_CHUNK_BYTES))
            if not chunk:
                return 1  # The file shrank meanwhile: the agent sees the bytes missing.
            sys.stdout.buffer.write(chunk)
            left -= len(chunk)
        sys.stdout.buffer.flush()
    return 0


def helper_write(home, text, size):
    parts = parse_file_path(text)
    root = os.path.realpath(home)
    folder_shown = "/".join(parts[:-1])
    folder = inside_home(root, os.path.join(root, *parts[:-1]), folder_shown or "The home folder")
    if not os.path.isdir(folder):
        raise HttpError(404, "no_such_folder", "There is no folder %s in the home folder." % folder_shown)
    target = inside_home(root, os.path.join(folder, parts[-1]), text)
    if os.path.isdir(target):
        raise HttpError(400, "not_a_file", "%s is a folder, not a file." % text)
    # A link in the home may lead to another folder of it: the file goes where the link leads.
    target_folder = os.path.dirname(target)
    space = os.statvfs(target_folder)
    free = space.f_bavail * space.f_frsize
    if size > free:
        sizes = (text, megabytes(size), megabytes(free))
        raise HttpError(507, "disk_full", "The VM's disk is full: %s needs %s, %s is free." % sizes)
    try:
        mode = os.stat(target).st_mode & 0o777  # a replaced script stays executable
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        name = "." + parts[-1][:64] + "."
        fd, temporary = tempfile.mkstemp(prefix=name, suffix=".upload", dir=target_folder)
    except OSError as error:
        raise os_error(error, text)
    try:
        with os.fdopen(fd, "wb", buffering=0) as file:
            os.fchmod(file.fileno(), mode)
            # Made with the helper's gid (nobody's): the student's own group, as the student's would.
            own_gid = pwd.getpwuid(os.getuid()).pw_gid
            if os.getegid() != own_gid:
                os.fchown(file.fileno(), -1, own_gid)
            helper_report({"ready": size})
            left = size
            while left > 0:
                chunk = sys.stdin.buffer.read(min(left, FILE_CHUNK_BYTES))
                if not chunk:
                    raise HttpError(400, "invalid", "The upload ended early.")
                file.write(chunk)
                left -= len(chunk)
        os.rename(temporary, target)
    except OSError as error:
        os.unlink(temporary)
        raise os_error(error, text)
    except BaseException:
        os.unlink(temporary)
        raise
    helper_report({"bytes": size})
    return 0


def file_helper(argv):
    """Runs as the student (FileHelper starts it): one read or write, answers as JSON lines."""
    try:
        if argv[0] == "read":
            return helper_read(argv[1], argv[2])
        return helper_write(argv[1], argv[2], int(argv[3]))
    except HttpError as error:
        helper_report({"error": {"status": error.status, "code": error.code, "message": error.message}})
        return 1


# What a helper may answer that the agent passes on: the student's programs cannot trace it (it runs
# with CHECK_GID), but it is the student's all the same, so the agent believes only what could be
# true. An error is one of these codes, with its own status and the agent's own words, built from the
# path the agent asked for and nothing the helper says.
HELPER_ERRORS = {
    "invalid_path": (400, lambda path: "The path %s is not one the home folder can have." % path),
    "outside_home": (403, lambda path: "%s leads outside the home folder (a symbolic link)." % path),
    "no_such_file": (404, lambda path: "There is no file %s in the home folder." % path),
    "no_such_folder": (
        404,
        lambda path: "There is no folder %s in the home folder." % (os.path.dirname(path) or "."),
    ),
    "permission_denied": (403, lambda path: "The student may not open %s." % path),
    "not_a_file": (400, lambda path: "%s is a folder or not a regular file." % path),
    "too_large": (413, lambda path: "%s is larger than %s, the most a file moved may be." % (path, megabytes(FILE_BYTES))),
    "disk_full": (507, lambda path: "The VM's disk is full: %s could not be written." % path),
    "invalid": (400, lambda path: "The upload of %s ended early." % path),
    "file_failed": (500, lambda path: "%s could not be moved." % path),
}


def helper_python():
    """The unit's interpreter: the agent's own may sit where the student cannot run it (a pyenv in
    root's home, in tests)."""
    return "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


class FileHelper:
    """The student's side of a file transfer: this program run as the student, in isolated mode."""

    def __init__(self, run_as, mode, path, size=0):
        # The program python3 runs: this folder, or the lab_agent.pyz it is zipped into.
        program = os.path.dirname(os.path.abspath(__file__))
        self.path = path
        self.size = size
        self.home = run_as.home
        argv = [helper_python(), "-I", "-S", program, "--file-helper", mode, run_as.home, path, str(size)]
        options = {}
        if run_as.switch:
            # As a check runs: the student's uid, but nobody's gid, with the student's own groups as
            # supplementary ones, so the student's programs cannot ptrace it or open its pipes.
            options.update(user=run_as.uid, group=run_as.gid, extra_groups=run_as.groups)
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if mode == "write" else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                cwd="/",
                env={"PATH": CHECK_PATH, "LANG": "C.UTF-8"},
                **options
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise HttpError(500, "file_failed", "Cannot start the file transfer: %s" % error)

    def answer(self, field):
        """Its next line's `field`, a whole number from 0 to FILE_BYTES; an error line is raised as
        the HttpError its code stands for, in the agent's words."""
        line = self.process.stdout.readline(4096)
        try:
            value = json.loads(line.decode("utf-8"))
        except ValueError:
            value = None
        error = value.get("error") if isinstance(value, dict) else None
        if isinstance(error, dict) and error.get("code") in HELPER_ERRORS:
            self.close()
            code = error["code"]
            status, message = HELPER_ERRORS[code]
            raise HttpError(status, code, (code == "disk_full" and self.disk_full()) or message(self.path))
        number = value.get(field) if isinstance(value, dict) else None
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= FILE_BYTES:
            self.close()
            raise HttpError(500, "file_failed", "The file transfer stopped unexpectedly.")
        return number

    def disk_full(self):
        """How full the home's disk is, in the agent's own reading, when an upload does not fit."""
        try:
            space = os.statvfs(self.home)
        except OSError:
            return None
        free = space.f_bavail * space.f_frsize
        if self.size <= free:
            return None
        sizes = (self.path, megabytes(self.size), megabytes(free))
        return "The VM's disk is full: %s needs %s, %s is free." % sizes

    def close(self):
        """Ends its input (an unfinished upload is then removed) and waits for it."""
        if self.process.stdin:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        self.process.stdout.close()
        self.process.wait()

    def kill(self):
        self.process.kill()
        self.close()


class Files:
    def __init__(self, config):
        self.config = config

    def upload(self, request):
        path = "/".join(parse_file_path(request.query("path")))
        size = request.stream_size
        if size > FILE_BYTES:
            sizes = (megabytes(size), megabytes(FILE_BYTES))
            raise HttpError(413, "too_large", "The file is %s; files up to %s can be uploaded." % sizes)
        if request.content_length() != framed_length(size):
            framing = (size, FILE_CHUNK_BYTES)
            raise invalid(["Content-Length does not match %d bytes in frames of %d." % framing])
        helper = FileHelper(resolve_run_as(self.config), "write", path, size)
        if helper.answer("ready") != size:  # the path is good and the disk has room
            helper.close()
            raise HttpError(500, "file_failed", "The file transfer stopped unexpectedly.")
        # Once the helper stopped (a full disk), the rest of the body is still read, and dropped, so
        # that the BFF, still sending, reads the answer instead of a reset connection.
        helper_stopped = False
        try:
            request.send_continue()
            for data in request.read_frames(size):
                if not helper_stopped:
                    try:
                        helper.process.stdin.write(data)
                    except OSError:
                        helper_stopped = True  # its answer line says why
        except HttpError:
            helper.close()  # its input ends early, so it removes what it wrote
            raise
        try:
            helper.process.stdin.close()
        except OSError:
            pass
        if helper.answer("bytes") != size:
            helper.close()
            raise HttpError(500, "file_failed", "The file transfer stopped unexpectedly.")
        helper.close()
        return {"path": path, "bytes": size}

    def download(self, request):
        path = "/".join(parse_file_path(request.query("path")))
        helper = FileHelper(resolve_run_as(self.config), "read", path)
        size = helper.answer("size")
        try:
            request.send_frames(size, helper.process.stdout)
        finally:
            helper.kill()
        return None
