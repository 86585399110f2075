"""Contains all the data models used in inputs/outputs"""

from .ack_request import AckRequest
from .action import Action
from .action_request import ActionRequest
from .actor import Actor
from .actor_kind import ActorKind
from .advance_clock import AdvanceClock
from .api_error import ApiError
from .attempt import Attempt
from .audit_action import AuditAction
from .audit_entry import AuditEntry
from .audit_entry_detail_type_0 import AuditEntryDetailType0
from .caller import Caller
from .caller_kind import CallerKind
from .candidate import Candidate
from .candidate_policy import CandidatePolicy
from .candidate_preview import CandidatePreview
from .candidate_ref import CandidateRef
from .candidate_write import CandidateWrite
from .catalogue_in_force import CatalogueInForce
from .catalogue_reload import CatalogueReload
from .catalogue_source import CatalogueSource
from .catalogue_summary import CatalogueSummary
from .circuit_hold import CircuitHold
from .circuit_list import CircuitList
from .circuit_request import CircuitRequest
from .circuit_scope import CircuitScope
from .circuit_status import CircuitStatus
from .circuit_view import CircuitView
from .claim_answer import ClaimAnswer
from .claim_request import ClaimRequest
from .class_policy import ClassPolicy
from .class_usage import ClassUsage
from .classification import Classification
from .clock_answer import ClockAnswer
from .code_summary import CodeSummary
from .confidence import Confidence
from .configuration_error import ConfigurationError
from .create_route import CreateRoute
from .cycle_usage import CycleUsage
from .decision_kind import DecisionKind
from .decision_view import DecisionView
from .delivery import Delivery
from .delivery_body import DeliveryBody
from .delivery_log import DeliveryLog
from .delivery_state import DeliveryState
from .dispatch import Dispatch
from .dispatch_reason import DispatchReason
from .effect_report import EffectReport
from .end_request import EndRequest
from .evaluate_answer import EvaluateAnswer
from .evaluate_request import EvaluateRequest
from .event_kind import EventKind
from .evidence import Evidence
from .evidence_skeleton import EvidenceSkeleton
from .explain import Explain
from .explain_outcome import ExplainOutcome
from .explain_place import ExplainPlace
from .explain_rule import ExplainRule
from .explain_text import ExplainText
from .explain_tier import ExplainTier
from .explain_timing import ExplainTiming
from .failure_answer import FailureAnswer
from .field_error import FieldError
from .get_openapi_document_response_200 import GetOpenapiDocumentResponse200
from .http_headers import HttpHeaders
from .invocation_report import InvocationReport
from .item_type_0 import ItemType0
from .item_type_0_kind import ItemType0Kind
from .item_type_1 import ItemType1
from .item_type_1_kind import ItemType1Kind
from .item_type_2 import ItemType2
from .item_type_2_kind import ItemType2Kind
from .item_type_3 import ItemType3
from .item_type_3_kind import ItemType3Kind
from .item_type_4 import ItemType4
from .item_type_4_kind import ItemType4Kind
from .item_type_5 import ItemType5
from .item_type_5_kind import ItemType5Kind
from .item_type_6 import ItemType6
from .item_type_6_kind import ItemType6Kind
from .last_failure import LastFailure
from .pending import Pending
from .pending_kind import PendingKind
from .permission import Permission
from .person import Person
from .phase import Phase
from .prefer import Prefer
from .profile import Profile
from .profile_revision import ProfileRevision
from .profile_revision_document import ProfileRevisionDocument
from .profile_write import ProfileWrite
from .reclassified_code import ReclassifiedCode
from .reclassified_entry import ReclassifiedEntry
from .resumable import Resumable
from .resume import Resume
from .retry_policy import RetryPolicy
from .returned import Returned
from .route_event import RouteEvent
from .route_outcome_type_0 import RouteOutcomeType0
from .route_outcome_type_0_kind import RouteOutcomeType0Kind
from .route_outcome_type_1 import RouteOutcomeType1
from .route_outcome_type_1_kind import RouteOutcomeType1Kind
from .route_outcome_type_2 import RouteOutcomeType2
from .route_outcome_type_2_kind import RouteOutcomeType2Kind
from .route_outcome_type_3 import RouteOutcomeType3
from .route_outcome_type_3_kind import RouteOutcomeType3Kind
from .route_outcome_type_4 import RouteOutcomeType4
from .route_outcome_type_4_kind import RouteOutcomeType4Kind
from .route_snapshot import RouteSnapshot
from .route_state import RouteState
from .schedule_preview import SchedulePreview
from .scope import Scope
from .set_permissions import SetPermissions
from .sign_in_form import SignInForm
from .skeleton_item import SkeletonItem
from .tier_spec import TierSpec
from .timing_source import TimingSource
from .unknown_attempt import UnknownAttempt
from .unknown_detail import UnknownDetail
from .unknown_entry import UnknownEntry
from .unknown_reclassification import UnknownReclassification
from .unknown_snapshot import UnknownSnapshot
from .unsafe_reason import UnsafeReason
from .validation_report import ValidationReport
from .verdict import Verdict
from .viewer import Viewer
from .wait_for_reset import WaitForReset
from .webhook import Webhook
from .webhook_event import WebhookEvent
from .webhook_write import WebhookWrite

__all__ = (
    "AckRequest",
    "Action",
    "ActionRequest",
    "Actor",
    "ActorKind",
    "AdvanceClock",
    "ApiError",
    "Attempt",
    "AuditAction",
    "AuditEntry",
    "AuditEntryDetailType0",
    "Caller",
    "CallerKind",
    "Candidate",
    "CandidatePolicy",
    "CandidatePreview",
    "CandidateRef",
    "CandidateWrite",
    "CatalogueInForce",
    "CatalogueReload",
    "CatalogueSource",
    "CatalogueSummary",
    "CircuitHold",
    "CircuitList",
    "CircuitRequest",
    "CircuitScope",
    "CircuitStatus",
    "CircuitView",
    "ClaimAnswer",
    "ClaimRequest",
    "Classification",
    "ClassPolicy",
    "ClassUsage",
    "ClockAnswer",
    "CodeSummary",
    "Confidence",
    "ConfigurationError",
    "CreateRoute",
    "CycleUsage",
    "DecisionKind",
    "DecisionView",
    "Delivery",
    "DeliveryBody",
    "DeliveryLog",
    "DeliveryState",
    "Dispatch",
    "DispatchReason",
    "EffectReport",
    "EndRequest",
    "EvaluateAnswer",
    "EvaluateRequest",
    "EventKind",
    "Evidence",
    "EvidenceSkeleton",
    "Explain",
    "ExplainOutcome",
    "ExplainPlace",
    "ExplainRule",
    "ExplainText",
    "ExplainTier",
    "ExplainTiming",
    "FailureAnswer",
    "FieldError",
    "GetOpenapiDocumentResponse200",
    "HttpHeaders",
    "InvocationReport",
    "ItemType0",
    "ItemType0Kind",
    "ItemType1",
    "ItemType1Kind",
    "ItemType2",
    "ItemType2Kind",
    "ItemType3",
    "ItemType3Kind",
    "ItemType4",
    "ItemType4Kind",
    "ItemType5",
    "ItemType5Kind",
    "ItemType6",
    "ItemType6Kind",
    "LastFailure",
    "Pending",
    "PendingKind",
    "Permission",
    "Person",
    "Phase",
    "Prefer",
    "Profile",
    "ProfileRevision",
    "ProfileRevisionDocument",
    "ProfileWrite",
    "ReclassifiedCode",
    "ReclassifiedEntry",
    "Resumable",
    "Resume",
    "RetryPolicy",
    "Returned",
    "RouteEvent",
    "RouteOutcomeType0",
    "RouteOutcomeType0Kind",
    "RouteOutcomeType1",
    "RouteOutcomeType1Kind",
    "RouteOutcomeType2",
    "RouteOutcomeType2Kind",
    "RouteOutcomeType3",
    "RouteOutcomeType3Kind",
    "RouteOutcomeType4",
    "RouteOutcomeType4Kind",
    "RouteSnapshot",
    "RouteState",
    "SchedulePreview",
    "Scope",
    "SetPermissions",
    "SignInForm",
    "SkeletonItem",
    "TierSpec",
    "TimingSource",
    "UnknownAttempt",
    "UnknownDetail",
    "UnknownEntry",
    "UnknownReclassification",
    "UnknownSnapshot",
    "UnsafeReason",
    "ValidationReport",
    "Verdict",
    "Viewer",
    "WaitForReset",
    "Webhook",
    "WebhookEvent",
    "WebhookWrite",
)
