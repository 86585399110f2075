from enum import StrEnum


class TimingSource(StrEnum):
    BODY_FIELDS = "body_fields"
    CLOCK = "clock"
    EPOCH = "epoch"
    PHRASE = "phrase"
    RESET_HEADERS = "reset_headers"
    RETRY_AFTER = "retry_after"
    RETRY_AFTER_MS = "retry_after_ms"
    RETRY_INFO = "retry_info"
    UNIFIED_RESET = "unified_reset"

    def __str__(self) -> str:
        return str(self.value)
