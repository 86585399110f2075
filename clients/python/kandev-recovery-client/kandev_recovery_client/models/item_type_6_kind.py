from enum import StrEnum


class ItemType6Kind(StrEnum):
    PROCESS_EXIT = "process_exit"

    def __str__(self) -> str:
        return str(self.value)
