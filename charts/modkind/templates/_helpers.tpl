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
{{- if and (eq $mode "job") (gt (int .Values.replicas) 1) -}}
{{- fail (printf "runner.mode job runs one replica, not %v: only the elected leader serves the artifacts runner pods fetch, and the Service would also send them to replicas that do not" .Values.replicas) -}}
{{- end -}}
{{- $mode -}}
{{- end -}}
{{- /* The Service runner pods reach the leader's artifact server at. */ -}}
{{- define "modkind.artifactsService" -}}{{ .Release.Name }}-artifacts{{- end -}}
