"""What each route does, once server.py has verified the request: health, checks, the serial
terminal's size, files, terminals, activity, and a warm VM's claim (a new key, sealed with the old).

Trusts: requests that reach it, since server.py only routes verified ones; their bodies are still
parsed and limited as the wire protocol says.
"""

import threading
import time

from activity import logins, student_cpu
from checks import RunningGroups, parse_check_request, parse_tty_size, run_check, set_tty_size
from config import CONCURRENT_CHECKS, TERMINALS, TERMINAL_PROTOCOL, VERSION
from files import Files
from http_error import HttpError, invalid
from keys import NonceMemory, read_key, replace_key, unseal_key
from run_as import resolve_run_as
from terminals import Terminal, parse_terminal_size


# Nonces seen recently: a captured request cannot be played again while it is remembered.
REMEMBERED_NONCES = 4096


class Agent:
    def __init__(self, config, log):
        self.config = config
        self.log = log
        self.nonces = NonceMemory(REMEMBERED_NONCES)
        self.check_slots = threading.BoundedSemaphore(CONCURRENT_CHECKS)
        self.running = RunningGroups()
        self.check_groups = RunningGroups(parent=self.running)
        self.files = Files(config)
        self.terminal_slots = threading.BoundedSemaphore(TERMINALS)
        self.claiming = threading.Lock()

    def health(self, request):
        run_as = resolve_run_as(self.config)
        return {"status": "ok", "version": VERSION, "runAs": {"user": run_as.user, "home": run_as.home}}

    def checks(self, request):
        specs = parse_check_request(request.json_body())
        run_as = resolve_run_as(self.config)
        cancelled = threading.Event()
        results = [None] * len(specs)
        failures = []

        def run(index, spec):
            with self.check_slots:
                if cancelled.is_set():
                    return
                try:
                    results[index] = run_check(spec, run_as, cancelled, self.check_groups)
                except HttpError as error:
                    failures.append(error)
                    cancelled.set()

        workers = [threading.Thread(target=run, args=item, daemon=True) for item in enumerate(specs)]
        for worker in workers:
            worker.start()
        for worker in workers:
            while worker.is_alive():
                worker.join(0.1)
                if not cancelled.is_set() and request.client_gone():
                    cancelled.set()
        if failures:
            raise failures[0]
        if request.client_gone():
            return None  # Killed because the client left: nobody is there to read these results.
        return {"results": results}

    def activity(self, request):
        run_as = resolve_run_as(self.config)
        cpu_seconds, processes = student_cpu(run_as.uid, self.check_groups)
        return {
            "cpuSeconds": round(cpu_seconds, 2),
            "processes": processes,
            "logins": logins(self.config["tty"], time.time()),
        }

    def tty(self, request):
        size = parse_tty_size(request.json_body())
        set_tty_size(self.config["tty"], size)
        return size

    def terminal(self, request):
        size = parse_terminal_size(request.query("rows"), request.query("cols"))
        if request.headers.get("Upgrade", "").strip().lower() != TERMINAL_PROTOCOL:
            raise invalid(["A terminal needs Upgrade: %s." % TERMINAL_PROTOCOL])
        if not self.terminal_slots.acquire(blocking=False):
            message = "This VM has %d terminals open already, the most it allows; close one first."
            raise HttpError(503, "too_many_terminals", message % TERMINALS)
        try:
            terminal = Terminal(resolve_run_as(self.config), size, self.running, request.key, request.nonce)
            try:
                terminal.run(request)
            finally:
                terminal.close()
        finally:
            self.terminal_slots.release()
        return None  # the 101 was the answer; handle_request logs the terminal once it has ended

    def claim(self, request):
        """A warm VM becomes someone's session: its key is replaced by the session's, sealed under the old
        one. Answered (signed) with the new key, which proves the change; the old key opens nothing after."""
        body = request.json_body()
        sealed = body.get("key") if isinstance(body, dict) else None
        new_key = unseal_key(request.key, request.nonce, sealed)
        with self.claiming:
            if read_key(self.config["keyFile"]) != request.key:
                raise HttpError(409, "claimed_already", "This VM was claimed already.")
            try:
                replace_key(self.config["keyFile"], new_key)
            except OSError as error:
                raise HttpError(500, "key_not_written", "The new key could not be written: %s." % error.strerror)
        request.key = new_key
        return {"claimed": True}

    def routes(self):
        return {
            "/v1/health": {"GET": self.health},
            "/v1/activity": {"GET": self.activity},
            "/v1/claim": {"POST": self.claim},
            "/v1/checks": {"POST": self.checks},
            "/v1/tty": {"POST": self.tty},
            "/v1/files": {"PUT": self.files.upload, "GET": self.files.download},
            "/v1/terminal": {"GET": self.terminal},
        }
