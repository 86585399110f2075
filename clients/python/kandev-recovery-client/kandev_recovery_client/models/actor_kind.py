from enum import StrEnum


class ActorKind(StrEnum):
    CALLER = "caller"
    COMMAND_LINE = "command_line"
    LOCAL = "local"
    PERSON = "person"
    TIMER = "timer"
    TOKEN = "token"

    def __str__(self) -> str:
        return str(self.value)
