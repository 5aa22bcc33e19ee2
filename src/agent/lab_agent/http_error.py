"""The one error every part raises for an answer other than 200; server.py turns it into the
answer, signed unless the request never proved it holds the key."""


class HttpError(Exception):
    def __init__(self, status, code, message, signed=True):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        # False for the answers given before the request proved it holds the key.
        self.signed = signed


def invalid(problems):
    return HttpError(400, "invalid", " ".join(problems))
