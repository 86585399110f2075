from enum import StrEnum


class CircuitScope(StrEnum):
    ACCOUNT = "account"
    MODEL = "model"
    PROFILE = "profile"
    PROVIDER = "provider"

    def __str__(self) -> str:
        return str(self.value)
