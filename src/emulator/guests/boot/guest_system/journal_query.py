# journalctl inside the service manager: the journal's entries by unit, count and output format.
# A part of Manager (manager.py).
import json
import time

from constants import JOURNAL
from unit_files import normalize_unit


class JournalQuery:
    # -- journalctl ------------------------------------------------------------------------------

    def journalctl(self, argv, privileged, reply):
        units, lines, output, follow = [], None, "short", False
        args = list(argv)
        while args:
            arg = args.pop(0)
            if arg in ("-u", "--unit") and args:
                units.append(normalize_unit(args.pop(0)))
            elif arg.startswith("--unit="):
                units.append(normalize_unit(arg.split("=", 1)[1]))
            elif arg.startswith("-u") and len(arg) > 2:
                units.append(normalize_unit(arg[2:]))
            elif arg in ("-n", "--lines") and args:
                lines = int(args.pop(0)) if args[0].isdigit() else lines
            elif arg.startswith("--lines="):
                lines = int(arg.split("=", 1)[1])
            elif arg.startswith("-n") and arg[2:].isdigit():
                lines = int(arg[2:])
            elif arg in ("-o", "--output") and args:
                output = args.pop(0)
            elif arg.startswith("--output="):
                output = arg.split("=", 1)[1]
            elif arg in ("-f", "--follow"):
                follow = True
            elif arg == "-e" or arg == "--pager-end":
                lines = lines if lines is not None else 1000
            elif arg.startswith("-") and not arg.startswith("--") and "u" in arg[1:]:
                flags = arg[1:]
                if flags.endswith("u") and args:
                    units.append(normalize_unit(args.pop(0)))
        if not privileged:
            reply.out(
                "Hint: You are currently not seeing messages from other users and the system.\n"
                "      Users in groups 'adm', 'systemd-journal', 'wheel' can see all messages.\n"
                "      Pass -q to turn off this notice.\n-- No entries --\n"
            ).done(0)
            return
        entries = []
        try:
            with open(JOURNAL, encoding="utf-8") as handle:
                for raw in handle:
                    try:
                        entry = json.loads(raw)
                    except ValueError:
                        continue
                    if units and entry.get("unit") not in units:
                        continue
                    entries.append(entry)
        except OSError:
            pass
        if lines is not None:
            entries = entries[-lines:] if lines else []
        if not entries:
            reply.out("-- No entries --\n")
        for entry in entries:
            if output == "cat":
                reply.out(entry["msg"] + "\n")
            else:
                reply.out("%s %s %s[%d]: %s\n" % (
                    time.strftime("%b %d %H:%M:%S", time.localtime(entry["t"])), self.hostname,
                    entry["ident"], entry["pid"], entry["msg"]))
        if follow:
            reply.err("journalctl: --follow is not emulated; showing what is there.\n")
        reply.done(0)
