from enum import StrEnum


class UnsafeReason(StrEnum):
    AT_TEARDOWN = "at_teardown"
    BOUNDARY_UNKNOWN = "boundary_unknown"
    EFFECTS_IN_EVIDENCE = "effects_in_evidence"
    EFFECTS_REPORTED = "effects_reported"
    OUTPUT_STARTED = "output_started"
    RESUME_NEEDS_SAME_CANDIDATE = "resume_needs_same_candidate"

    def __str__(self) -> str:
        return str(self.value)
