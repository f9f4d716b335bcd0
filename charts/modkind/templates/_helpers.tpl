{{- define "modkind.name" -}}{{ .Release.Name }}{{- end -}}
{{- define "modkind.labels" -}}
app.kubernetes.io/name: modkind
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
{{- define "modkind.selector" -}}
app.kubernetes.io/name: modkind
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- /* The controller's image; runner Jobs run the same one (--runner-image). */ -}}
{{- define "modkind.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- /* The runner mode, checked: job, pool or process. */ -}}
{{- define "modkind.runnerMode" -}}
{{- $mode := .Values.runner.mode | default "" -}}
{{- if not (has $mode (list "job" "pool" "process")) -}}
{{- fail (printf "runner.mode must be job, pool or process, not %q" $mode) -}}
{{- end -}}
{{- $mode -}}
{{- end -}}
{{- /* "true" when runner pods execute the Runs (job or pool mode), empty otherwise. */ -}}
{{- define "modkind.runnerPods" -}}
{{- if has (include "modkind.runnerMode" .) (list "job" "pool") }}true{{ end -}}
{{- end -}}
{{- /* The Service runner pods reach the artifact server at: any replica, which relays to the leader. */ -}}
{{- define "modkind.artifactsService" -}}{{ .Release.Name }}-artifacts{{- end -}}
