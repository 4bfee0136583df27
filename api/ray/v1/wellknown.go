package v1

// Well-known label keys. KubeRay sets these on the objects a RayCluster owns;
// the Ray autoscaler, Kueue and users' selectors rely on them, so their names
// and values are part of the API.
const (
	// LabelCluster names the RayCluster a Pod, Service, Job or RBAC object belongs to.
	LabelCluster = "ray.io/cluster"
	// LabelNodeType is the node type of a Pod: head, worker or redis-cleanup.
	LabelNodeType = "ray.io/node-type"
	// LabelGroup is the worker group name of a Pod ("headgroup" for the head).
	LabelGroup = "ray.io/group"
	// LabelIsRayNode marks every Ray Pod with the value "yes".
	LabelIsRayNode = "ray.io/is-ray-node"
	// LabelIdentifier is "<cluster>-<node type>", trimmed to a valid label value.
	LabelIdentifier = "ray.io/identifier"
	// LabelExecutionAttempt carries a RayJob's status.executionAttempt on
	// the attempt's RayCluster, Pods and submitter Job (spec.retryStrategy
	// BlockingRecreate). Not a KubeRay label.
	LabelExecutionAttempt = "ray.io/rayjob-execution-attempt"
	// LabelOriginatedFromCRName names the custom resource (RayJob, RayService)
	// a RayCluster or one of its children was created for.
	LabelOriginatedFromCRName = "ray.io/originated-from-cr-name"
	// LabelOriginatedFromCRD is the kind of that custom resource: RayCluster,
	// RayJob or RayService.
	LabelOriginatedFromCRD = "ray.io/originated-from-crd"
	// LabelJobSubmissionMode records, on the RayCluster of a RayJob, the
	// RayJob's submission mode (K8sJobMode, HTTPMode, ...).
	LabelJobSubmissionMode = "ray.io/job-submission-mode"
	// LabelServe marks Pods that may receive Ray Serve traffic ("true"/"false")
	// and, on serve Services, names the service.
	LabelServe = "ray.io/serve"
	// LabelHeadlessWorkerService marks the headless Service of multi-host
	// worker groups; its value is the RayCluster name.
	LabelHeadlessWorkerService = "ray.io/headless-worker-svc"
	// LabelWorkerReplicaName is the unique name of one replica (slice) of a
	// multi-host worker group.
	LabelWorkerReplicaName = "ray.io/worker-group-replica-name"
	// LabelWorkerReplicaIndex is the ordered index of a replica in its worker group.
	LabelWorkerReplicaIndex = "ray.io/worker-group-replica-index"
	// LabelReplicaHostIndex is the index of a host inside a multi-host replica.
	LabelReplicaHostIndex = "ray.io/replica-host-index"
	// LabelHashWithoutReplicas is KubeRay's hash of a spec without replicas
	// and workersToDelete, used by RayService to detect spec changes.
	LabelHashWithoutReplicas = "ray.io/hash-without-replicas-and-workers-to-delete"
	// LabelNumWorkerGroups records how many worker groups a RayService cluster has.
	LabelNumWorkerGroups = "ray.io/num-worker-groups"
	// LabelKubeRayVersion records the operator version that created a RayCluster.
	LabelKubeRayVersion = "ray.io/kuberay-version"
	// LabelSchedulerName selects a batch scheduler for a RayCluster.
	LabelSchedulerName = "ray.io/scheduler-name"
	// LabelPriorityClassName sets the batch scheduler priority class.
	LabelPriorityClassName = "ray.io/priority-class-name"
	// LabelGangSchedulingEnabled asks a batch scheduler for gang scheduling.
	LabelGangSchedulingEnabled = "ray.io/gang-scheduling-enabled"

	// LabelAppName is the standard application name label; its value is AppName.
	LabelAppName = "app.kubernetes.io/name"
	// LabelCreatedBy is the standard creator label; its value is CreatedByOperator.
	LabelCreatedBy = "app.kubernetes.io/created-by"
)

// Values of the well-known labels.
const (
	// AppName is the value of LabelAppName on every child object.
	AppName = "kuberay"
	// CreatedByOperator is the value of LabelCreatedBy on every child object.
	CreatedByOperator = "kuberay-operator"
	// HeadGroupName is the value of LabelGroup on the head Pod.
	HeadGroupName = "headgroup"
	// IsRayNodeValue is the value of LabelIsRayNode.
	IsRayNodeValue = "yes"
	// KubeRayController is the spec.managedBy value that means "this operator".
	KubeRayController = "ray.io/kuberay-operator"
)

// Well-known annotation keys.
const (
	// AnnotationFTEnabled enables GCS fault tolerance (legacy form of
	// spec.gcsFaultToleranceOptions); the head Pod carries the effective value.
	AnnotationFTEnabled = "ray.io/ft-enabled"
	// AnnotationExternalStorageNamespace overrides the Redis storage namespace
	// used by GCS fault tolerance (default: the RayCluster UID).
	AnnotationExternalStorageNamespace = "ray.io/external-storage-namespace"
	// AnnotationOverwriteContainerCmd set to "true" keeps the user's Ray
	// container command; the generated `ray start` command is still exported
	// in KUBERAY_GEN_RAY_START_CMD.
	AnnotationOverwriteContainerCmd = "ray.io/overwrite-container-cmd"
	// AnnotationEnableServeService set to "true" makes a RayCluster get a
	// serve Service ("<cluster>-serve-svc").
	AnnotationEnableServeService = "ray.io/enable-serve-service"
	// AnnotationGCSFTDeletionTimeout bounds, in seconds, how long the Redis
	// cleanup finalizer may block deletion (default 300).
	AnnotationGCSFTDeletionTimeout = "ray.io/gcs-ft-deletion-timeout"
	// AnnotationIngressClass is the legacy ingress class annotation; KubeRay
	// moves it into spec.ingressClassName of the dashboard Ingress.
	AnnotationIngressClass = "kubernetes.io/ingress.class"
	// AnnotationDisableProvisionedHeadRestart set to "true" keeps a RayJob
	// (sidecar submission mode) from recreating a head Pod once provisioned.
	AnnotationDisableProvisionedHeadRestart = "ray.io/disable-provisioned-head-restart"
)

// Finalizers set by the operator.
const (
	// GCSFaultToleranceRedisCleanupFinalizer keeps a GCS-FT RayCluster until
	// its Redis storage namespace has been cleaned up.
	GCSFaultToleranceRedisCleanupFinalizer = "ray.io/gcs-ft-redis-cleanup-finalizer"
	// RayJobStopJobFinalizer keeps a RayJob until its Ray job has been stopped.
	RayJobStopJobFinalizer = "ray.io/rayjob-finalizer"
)

// Default ports of the Ray head and their Service port names.
const (
	DefaultClientPort               = 10001
	DefaultGcsServerPort            = 6379
	DefaultDashboardPort            = 8265
	DefaultMetricsPort              = 8080
	DefaultServingPort              = 8000
	DefaultDashboardAgentListenPort = 52365

	ClientPortName    = "client"
	GcsServerPortName = "gcs-server"
	DashboardPortName = "dashboard"
	MetricsPortName   = "metrics"
	ServingPortName   = "serve"
)

// RayContainerIndex is the position of the Ray container in head and worker
// Pod templates: KubeRay requires it to be the first container.
const RayContainerIndex = 0

// Kinds of this API. They are also the values of LabelOriginatedFromCRD on
// the objects each kind creates, and what the Pod builder calls the creator
// of a RayCluster.
const (
	// KindRayCluster is the RayCluster kind.
	KindRayCluster = "RayCluster"
	// KindRayJob is the RayJob kind.
	KindRayJob = "RayJob"
	// KindRayService is the RayService kind.
	KindRayService = "RayService"
	// KindRayCronJob is the RayCronJob kind.
	KindRayCronJob = "RayCronJob"
)

// RayService annotations and finalizer.
const (
	// AnnotationInitializingTimeout bounds how long a RayService may stay
	// initializing: a Go duration ("30m") or a number of seconds ("1800").
	AnnotationInitializingTimeout = "ray.io/initializing-timeout"
	// RayServiceFinalizer keeps a RayService until its clusters are gone.
	RayServiceFinalizer = "ray.io/rayservice-finalizer"
)

// Annotations this operator keeps on the RayClusters of a RayService, so
// that what it decided survives a restart (KubeRay keeps both in memory).
const (
	// AnnotationAppliedServeConfig records the serveConfigV2 last applied to
	// the cluster (the text, or "sha256:<hex>" for a large config).
	AnnotationAppliedServeConfig = "ray.io/applied-serve-config"
	// AnnotationDeletionDeadline is when an old cluster that no longer
	// serves is deleted (RFC 3339).
	AnnotationDeletionDeadline = "ray.io/deletion-deadline"
)
