"""Contains all the data models used in inputs/outputs"""

from .ack_request import AckRequest
from .action import Action
from .action_request import ActionRequest
from .advance_clock import AdvanceClock
from .api_error import ApiError
from .attempt import Attempt
from .attempt_classification_type_0 import AttemptClassificationType0
from .attempt_policy import AttemptPolicy
from .caller import Caller
from .caller_kind import CallerKind
from .candidate import Candidate
from .candidate_policy import CandidatePolicy
from .candidate_preview import CandidatePreview
from .candidate_ref import CandidateRef
from .candidate_write import CandidateWrite
from .catalogue_summary import CatalogueSummary
from .circuit_hold import CircuitHold
from .circuit_list import CircuitList
from .circuit_scope import CircuitScope
from .circuit_status import CircuitStatus
from .circuit_view import CircuitView
from .claim_answer import ClaimAnswer
from .claim_request import ClaimRequest
from .class_policy import ClassPolicy
from .clock_answer import ClockAnswer
from .code_summary import CodeSummary
from .configuration_error import ConfigurationError
from .create_route import CreateRoute
from .decision_kind import DecisionKind
from .decision_view import DecisionView
from .dispatch import Dispatch
from .dispatch_reason import DispatchReason
from .effect_report import EffectReport
from .failure_answer import FailureAnswer
from .failure_answer_classification import FailureAnswerClassification
from .field_error import FieldError
from .get_openapi_document_response_200 import GetOpenapiDocumentResponse200
from .invocation_report import InvocationReport
from .last_failure import LastFailure
from .pending import Pending
from .pending_kind import PendingKind
from .person import Person
from .profile import Profile
from .profile_write import ProfileWrite
from .report_failure_body import ReportFailureBody
from .resume import Resume
from .retry_policy import RetryPolicy
from .route_event import RouteEvent
from .route_snapshot import RouteSnapshot
from .route_state import RouteState
from .schedule_preview import SchedulePreview
from .scope import Scope
from .set_permissions import SetPermissions
from .sign_in_form import SignInForm
from .tier_spec import TierSpec
from .unknown_entry import UnknownEntry
from .unknown_snapshot import UnknownSnapshot
from .unsafe_reason import UnsafeReason
from .validation_report import ValidationReport
from .viewer import Viewer
from .wait_for_reset import WaitForReset

__all__ = (
    "AckRequest",
    "Action",
    "ActionRequest",
    "AdvanceClock",
    "ApiError",
    "Attempt",
    "AttemptClassificationType0",
    "AttemptPolicy",
    "Caller",
    "CallerKind",
    "Candidate",
    "CandidatePolicy",
    "CandidatePreview",
    "CandidateRef",
    "CandidateWrite",
    "CatalogueSummary",
    "CircuitHold",
    "CircuitList",
    "CircuitScope",
    "CircuitStatus",
    "CircuitView",
    "ClaimAnswer",
    "ClaimRequest",
    "ClassPolicy",
    "ClockAnswer",
    "CodeSummary",
    "ConfigurationError",
    "CreateRoute",
    "DecisionKind",
    "DecisionView",
    "Dispatch",
    "DispatchReason",
    "EffectReport",
    "FailureAnswer",
    "FailureAnswerClassification",
    "FieldError",
    "GetOpenapiDocumentResponse200",
    "InvocationReport",
    "LastFailure",
    "Pending",
    "PendingKind",
    "Person",
    "Profile",
    "ProfileWrite",
    "ReportFailureBody",
    "Resume",
    "RetryPolicy",
    "RouteEvent",
    "RouteSnapshot",
    "RouteState",
    "SchedulePreview",
    "Scope",
    "SetPermissions",
    "SignInForm",
    "TierSpec",
    "UnknownEntry",
    "UnknownSnapshot",
    "UnsafeReason",
    "ValidationReport",
    "Viewer",
    "WaitForReset",
)
