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
{{- /* The runner mode, checked: job or process. */ -}}
{{- define "modkind.runnerMode" -}}
{{- $mode := .Values.runner.mode | default "" -}}
{{- if not (has $mode (list "job" "process")) -}}
{{- fail (printf "runner.mode must be job or process, not %q" $mode) -}}
{{- end -}}
{{- $mode -}}
{{- end -}}
{{- /* The Service runner pods reach the artifact server at: any replica, which relays to the leader. */ -}}
{{- define "modkind.artifactsService" -}}{{ .Release.Name }}-artifacts{{- end -}}
