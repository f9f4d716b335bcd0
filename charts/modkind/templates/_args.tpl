{{- /*
The controller's arguments, from the chart's values: a YAML list. extraArgs come after them, and
may not repeat one of them (modkind.extraArgs).
*/ -}}
{{- define "modkind.args" -}}
{{- $mode := include "modkind.runnerMode" . -}}
{{- $artifacts := include "modkind.artifactsService" . -}}
- --leader-elect=true
- --leader-election-namespace={{ .Release.Namespace }}
{{- with .Values.tenantNamespaces }}
- --namespaces={{ join "," (uniq .) }}
{{- end }}
# Module source credentials and ClusterProviderConfig Secrets: only here, where the
# chart lets modkind read Secrets whatever tenantNamespaces says.
- --credentials-namespaces={{ .Release.Namespace }}
{{- with .Values.terraformBinary }}
- --terraform-binary={{ . }}
{{- end }}
- --work-dir=/var/lib/modkind
- --max-concurrent-runs={{ .Values.maxConcurrentRuns }}
{{- with .Values.maxConcurrentRunsPerNamespace }}
- --max-concurrent-runs-per-namespace={{ . }}
{{- end }}
# Signs every state the controller writes and every Run it creates; made at the
# first start, in this namespace only cluster admins and modkind read.
- --state-keys-secret={{ .Release.Namespace }}/{{ include "modkind.name" . }}-state-keys
{{- with .Values.maxReconciles }}
- --max-reconciles={{ . }}
{{- end }}
- --poll-interval={{ .Values.pollInterval }}
- --resync-interval={{ .Values.resyncInterval }}
- --drift-interval={{ .Values.driftInterval }}
- --lock-duration={{ .Values.lockDuration }}
- --run-timeout={{ .Values.runTimeout }}
- --runner={{ $mode }}
{{- if include "modkind.runnerPods" . }}
{{- if eq $mode "pool" }}
- --pool-min={{ .Values.runner.pool.min }}
- --pool-idle={{ .Values.runner.pool.idle }}
{{- end }}
- --runner-image={{ include "modkind.image" . }}
- --runner-start-timeout={{ .Values.runner.startTimeout }}
{{- with .Values.runner.deadlines }}
- --runner-deadlines={{ $first := true }}{{ range $op, $d := . }}{{ if not $first }},{{ end }}{{ $op }}={{ $d }}{{ $first = false }}{{ end }}
{{- end }}
- --runner-job-ttl={{ .Values.runner.jobTTL }}
{{- with include "modkind.runnerPod" . }}
# Every runner pod's settings (runner.pod), under the ProviderConfig's spec.runner.
- {{ printf "--runner-pod-defaults=%s" . | toJson }}
{{- end }}
# Runner pods fetch the module and provider bundles of their Run here, over TLS with a
# certificate for these names. Every replica listens: the leader serves, a follower
# relays the connection to the leader (at its POD_IP), TLS passing through.
- --artifacts-bind-address=:{{ .Values.runner.artifactsPort }}
- --artifacts-url=https://{{ $artifacts }}.{{ .Release.Namespace }}.svc:{{ .Values.runner.artifactsPort }}
{{- $ns := printf "%s.%s" $artifacts .Release.Namespace }}
- --artifacts-hosts={{ join "," (list $artifacts $ns (printf "%s.svc" $ns) (printf "%s.svc.%s" $ns .Values.clusterDomain)) }}
# The certificate authority runner Jobs trust and the serving certificate it signs,
# shared by every replica: made by the first, renewed before it expires.
- --artifacts-tls-secret={{ .Release.Namespace }}/{{ include "modkind.name" . }}-artifacts-tls
{{- end }}
- --metrics-bind-address=:{{ .Values.metrics.port }}
- --health-probe-bind-address=:8081
{{- end -}}

{{- /*
extraArgs as a YAML list, each --name=value, refused when it names a flag the chart already sets
from a value: the flag package would take the later one, and the value would be ignored without a
word.
*/ -}}
{{- define "modkind.extraArgs" -}}
{{- $set := dict -}}
{{- range (include "modkind.args" . | fromYamlArray) -}}
{{- $_ := set $set (regexReplaceAll "=.*$" (toString .) "") true -}}
{{- end -}}
{{- range .Values.extraArgs -}}
{{- $name := regexReplaceAll "=.*$" . "" -}}
{{- if hasKey $set $name -}}
{{- fail (printf "extraArgs: %s is set by the chart from a value (see values.yaml); set that value instead of passing the flag again" $name) -}}
{{- end }}
- {{ . | toJson }}
{{- end -}}
{{- end -}}

{{- /*
runner.pod without its empty settings, as JSON for --runner-pod-defaults; empty when none is set.
*/ -}}
{{- define "modkind.runnerPod" -}}
{{- $pod := dict -}}
{{- range $k, $v := .Values.runner.pod -}}
{{- if $v -}}{{- $_ := set $pod $k $v -}}{{- end -}}
{{- end -}}
{{- if $pod -}}{{ toJson $pod }}{{- end -}}
{{- end -}}
