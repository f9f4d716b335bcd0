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
