from enum import StrEnum


class Phase(StrEnum):
    LAUNCH = "launch"
    PROMPT = "prompt"
    SESSION_INIT = "session_init"
    STREAM = "stream"
    TEARDOWN = "teardown"

    def __str__(self) -> str:
        return str(self.value)
