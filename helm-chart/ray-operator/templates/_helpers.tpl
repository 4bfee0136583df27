{{/*
Names. They follow the usual Helm conventions with KubeRay's value keys
(nameOverride, fullnameOverride, componentOverride), so that with the default
values every object has the name KubeRay's chart gives it: kuberay-operator.
*/}}

{{/* The app.kubernetes.io/name label. */}}
{{- define "ray-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The base name of every namespaced object: fullnameOverride, else
release-name, with the name appended unless the release name contains it. */}}
{{- define "ray-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ray-operator.component" -}}
{{- default .Chart.Name .Values.componentOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "ray-operator.labels" -}}
{{ include "ray-operator.selectorLabels" . }}
app.kubernetes.io/component: {{ include "ray-operator.component" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The labels the Deployment, the Services and the ServiceMonitor select
the operator Pods by. */}}
{{- define "ray-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ray-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The operator's ServiceAccount: serviceAccount.name, defaulting to the
full name when the chart creates it and to "default" otherwise. */}}
{{- define "ray-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ray-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ray-operator.configMapName" -}}
{{ include "ray-operator.fullname" . }}-config
{{- end }}

{{- define "ray-operator.webhookServiceName" -}}
{{ include "ray-operator.fullname" . }}-webhook-service
{{- end }}

{{- define "ray-operator.webhookConfigurationName" -}}
{{ include "ray-operator.fullname" . }}-validating-webhook-configuration
{{- end }}

{{- define "ray-operator.webhookSecretName" -}}
{{ include "ray-operator.fullname" . }}-webhook-server-cert
{{- end }}

{{/* Where the configuration file is mounted when configuration.enabled. */}}
{{- define "ray-operator.configDir" -}}
/etc/kuberay
{{- end }}

{{/*
The namespaces the operator watches, comma-separated: watchNamespace (a list,
or a comma-separated string), else the release namespace with
singleNamespaceInstall, else empty (all namespaces).
*/}}
{{- define "ray-operator.watchNamespace" -}}
{{- $watch := .Values.watchNamespace }}
{{- if kindIs "string" $watch }}
{{- $watch = splitList "," $watch | compact }}
{{- end }}
{{- if $watch }}
{{- join "," $watch }}
{{- else if .Values.singleNamespaceInstall }}
{{- .Release.Namespace }}
{{- end }}
{{- end }}

{{/* The value as a boolean: true for true and "true" only. */}}
{{- define "ray-operator.isTrue" -}}
{{- if eq (toString .) "true" }}true{{ end }}
{{- end }}

{{/*
The operator's Configuration (api/config/v1alpha1), built into the dict
.out from the values of .root. It is written to the ConfigMap when
configuration.enabled and turned into flags otherwise, so that both ways run
the operator with the same settings. Built in place rather than returned as
text, so that numbers keep their type (no float round trip).
*/}}
{{- define "ray-operator.buildConfiguration" -}}
{{- $v := .root.Values }}
{{- $c := .out }}
{{- $_ := set $c "metricsAddr" ":8080" }}
{{- $_ = set $c "probeAddr" ":8082" }}
{{- $_ = set $c "enableLeaderElection" (eq (include "ray-operator.isTrue" $v.leaderElectionEnabled) "true") }}
{{- if not (kindIs "invalid" $v.reconcileConcurrency) }}
{{- $_ = set $c "reconcileConcurrency" (include "ray-operator.whole" (dict "key" "reconcileConcurrency" "value" $v.reconcileConcurrency "min" 1) | int64) }}
{{- end }}
{{- with $v.creationEvents }}
{{- $_ = set $c "creationEvents" . }}
{{- end }}
{{- with $v.mtls }}
{{- with .certificates }}
{{- $_ = set $c "mtlsCertificates" . }}
{{- end }}
{{- with .certificateDuration }}
{{- $_ = set $c "mtlsCertificateDuration" . }}
{{- end }}
{{- end }}
{{- $_ = set $c "qps" (include "ray-operator.number" (dict "key" "kubeClient.qps" "value" $v.kubeClient.qps) | float64) }}
{{- $_ = set $c "burst" (include "ray-operator.whole" (dict "key" "kubeClient.burst" "value" $v.kubeClient.burst "min" 0) | int64) }}
{{- with include "ray-operator.watchNamespace" .root }}
{{- $_ = set $c "watchNamespace" . }}
{{- end }}
{{- $log := $v.logging }}
{{- if and $log.baseDir $log.fileName }}
{{- $_ = set $c "logFile" (printf "%s/%s" (trimSuffix "/" $log.baseDir) $log.fileName) }}
{{- else if or $log.baseDir $log.fileName $log.sizeLimit }}
{{- fail "logging.baseDir and logging.fileName must be set together (logs go to baseDir/fileName on an emptyDir of sizeLimit)" }}
{{- end }}
{{- with $log.fileEncoder }}
{{- $_ = set $c "logFileEncoder" . }}
{{- end }}
{{- with $log.stdoutEncoder }}
{{- $_ = set $c "logStdoutEncoder" . }}
{{- end }}
{{- if and (include "ray-operator.isTrue" $v.batchScheduler.enabled) $v.batchScheduler.name }}
{{- fail "batchScheduler.enabled (deprecated, Volcano) and batchScheduler.name exclude each other; set batchScheduler.name only" }}
{{- end }}
{{- if include "ray-operator.isTrue" $v.batchScheduler.enabled }}
{{- $_ = set $c "enableBatchScheduler" true }}
{{- end }}
{{- with $v.batchScheduler.name }}
{{- $_ = set $c "batchScheduler" . }}
{{- end }}
{{- $_ = set $c "useKubernetesProxy" (eq (include "ray-operator.isTrue" $v.useKubernetesProxy) "true") }}
{{- $_ = set $c "enableMetrics" (eq (include "ray-operator.isTrue" $v.metrics.enabled) "true") }}
{{- range $key := list "defaultContainerEnvs" "defaultPodAnnotations" "defaultPodLabels" "headSidecarContainers" "workerSidecarContainers" }}
{{- with get $v.configuration $key }}
{{- if not $v.configuration.enabled }}
{{- fail (printf "configuration.%s is only passed to the operator through its configuration file: set configuration.enabled=true" $key) }}
{{- end }}
{{- $_ = set $c $key . }}
{{- end }}
{{- end }}
{{- end }}

{{/* Fails unless .value is a number, or a string of one (helm --set
passes 1.5 as a string); renders it. */}}
{{- define "ray-operator.number" -}}
{{- $numeric := or (kindIs "float64" .value) (kindIs "int64" .value) (kindIs "int" .value) (kindIs "string" .value) }}
{{- if not (and $numeric (regexMatch "^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$" (toString .value))) }}
{{- fail (printf "%s must be a number, got %v" .key .value) }}
{{- end }}
{{- if lt (float64 .value) 0.0 }}
{{- fail (printf "%s must not be negative, got %v" .key .value) }}
{{- end }}
{{- float64 .value }}
{{- end }}

{{/* Fails unless .value is a whole number of at least .min; renders it. */}}
{{- define "ray-operator.whole" -}}
{{- $n := include "ray-operator.number" . | float64 }}
{{- if or (ne $n (floor $n)) (lt $n (float64 .min)) }}
{{- fail (printf "%s must be a whole number of at least %d, got %v" .key .min .value) }}
{{- end }}
{{- int64 $n }}
{{- end }}

{{/* The Configuration as the YAML of the --config file. */}}
{{- define "ray-operator.configurationFile" -}}
{{- $c := dict "apiVersion" "config.ray.io/v1alpha1" "kind" "Configuration" }}
{{- include "ray-operator.buildConfiguration" (dict "root" . "out" $c) }}
{{- toYaml $c }}
{{- end }}

{{/*
The operator's command-line arguments, one per line as a YAML list. Each
Configuration field has a flag of the same meaning (internal/operator/flags.go);
with configuration.enabled the file replaces them. --feature-gates and the
webhook flags apply either way.
*/}}
{{- define "ray-operator.args" -}}
{{- $args := list }}
{{- if .Values.configuration.enabled }}
{{- $args = append $args (printf "--config=%s/config.yaml" (include "ray-operator.configDir" .)) }}
{{- else }}
{{- $c := dict }}
{{- include "ray-operator.buildConfiguration" (dict "root" . "out" $c) }}
{{- range $pair := list
    (list "metricsAddr" "metrics-addr")
    (list "probeAddr" "health-probe-bind-address")
    (list "enableLeaderElection" "enable-leader-election")
    (list "reconcileConcurrency" "reconcile-concurrency")
    (list "creationEvents" "creation-events")
    (list "mtlsCertificates" "mtls-certificates")
    (list "mtlsCertificateDuration" "mtls-certificate-duration")
    (list "qps" "qps")
    (list "burst" "burst")
    (list "watchNamespace" "watch-namespace")
    (list "logFile" "log-file-path")
    (list "logFileEncoder" "log-file-encoder")
    (list "logStdoutEncoder" "log-stdout-encoder")
    (list "enableBatchScheduler" "enable-batch-scheduler")
    (list "batchScheduler" "batch-scheduler")
    (list "useKubernetesProxy" "use-kubernetes-proxy")
    (list "enableMetrics" "enable-metrics") }}
{{- if hasKey $c (first $pair) }}
{{- $args = append $args (printf "--%s=%v" (last $pair) (get $c (first $pair))) }}
{{- end }}
{{- end }}
{{- end }}
{{- with include "ray-operator.featureGates" . }}
{{- $args = append $args (printf "--feature-gates=%s" .) }}
{{- end }}
{{- if .Values.webhook.enabled }}
{{- $args = append $args (printf "--webhook-service-name=%s" (include "ray-operator.webhookServiceName" .)) }}
{{- $args = append $args (printf "--webhook-configuration-name=%s" (include "ray-operator.webhookConfigurationName" .)) }}
{{- $args = append $args (printf "--webhook-secret-name=%s" (include "ray-operator.webhookSecretName" .)) }}
{{- end }}
{{- toYaml $args }}
{{- end }}

{{/* "true" when featureGates turns KubernetesWAS on, else empty. */}}
{{- define "ray-operator.kubernetesWASEnabled" -}}
{{- range .Values.featureGates }}
{{- if and (eq .name "KubernetesWAS") (eq (include "ray-operator.isTrue" .enabled) "true") }}true{{ end }}
{{- end }}
{{- end }}

{{/* featureGates ([{name, enabled}]) as Name=bool,Name=bool. */}}
{{- define "ray-operator.featureGates" -}}
{{- $gates := list }}
{{- range .Values.featureGates }}
{{- if not .name }}
{{- fail "every featureGates entry needs a name" }}
{{- end }}
{{- $gates = append $gates (printf "%s=%t" .name (eq (include "ray-operator.isTrue" .enabled) "true")) }}
{{- end }}
{{- join "," $gates }}
{{- end }}

{{/*
Keys of KubeRay's chart that this chart does not implement. Helm ignores
unknown keys, so each one that asks for something is refused here rather
than dropped without a word.
*/}}
{{- define "ray-operator.refuseUnsupported" -}}
{{- if .Values.createAggregateClusterRoles }}
{{- fail "createAggregateClusterRoles is not supported by this chart; bind the <kind>-editor-role and <kind>-viewer-role ClusterRoles instead" }}
{{- end }}
{{- if and .Values.nodeEventForwarder (include "ray-operator.isTrue" .Values.nodeEventForwarder.enabled) }}
{{- fail "nodeEventForwarder is not supported: this operator does not forward node events" }}
{{- end }}
{{- if .Values.configuration.allowedNodeLabels }}
{{- fail "configuration.allowedNodeLabels is not supported: this operator's configuration has no such field" }}
{{- end }}
{{- if and .Values.webhooks (include "ray-operator.isTrue" .Values.webhooks.enabled) }}
{{- fail "webhooks.enabled is not read by this chart: set webhook.enabled=true (no cert-manager needed)" }}
{{- end }}
{{- end }}

{{/* The rules of a Role or ClusterRole read from a copy, in files/rbac, of a
role under config/rbac (`make generate` keeps the copies in step). */}}
{{- define "ray-operator.rulesOf" -}}
{{- $role := .Files.Get (printf "files/rbac/%s" .file) | fromYaml }}
{{- if not $role.rules }}
{{- fail (printf "files/rbac/%s has no rules; run make generate" .file) }}
{{- end }}
{{- toYaml (dict "rules" $role.rules) }}
{{- end }}

{{/* The subjects of every binding: the operator's ServiceAccount. */}}
{{- define "ray-operator.subjects" -}}
subjects:
- kind: ServiceAccount
  name: {{ include "ray-operator.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}
