from enum import StrEnum


class Scope(StrEnum):
    ACCOUNT = "account"
    MODEL = "model"
    PROFILE = "profile"
    PROVIDER = "provider"
    REQUEST = "request"

    def __str__(self) -> str:
        return str(self.value)
