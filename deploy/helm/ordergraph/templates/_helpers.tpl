{{- define "ordergraph.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/part-of: ordergraph
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "ordergraph.selector" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "ordergraph.fullname" -}}
{{ printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "ordergraph.secretName" -}}
{{ .Values.secrets.existingSecret | default (printf "%s-secrets" .Release.Name) }}
{{- end -}}

{{/* The pod's termination budget: the preStop sleep, then the process's own shutdown deadline, plus a margin. */}}
{{- define "ordergraph.terminationGracePeriodSeconds" -}}
{{ add .Values.drain.preStopSeconds (div (add .Values.drain.processShutdownDeadlineMs 999) 1000) 5 }}
{{- end -}}

{{/*
A Deployment for one process. Arguments: root (the chart's context), name, component (its values), configMaps (the
ConfigMaps besides "config" its environment comes from, by suffix), env (a list of extra env entries), volumes and
mounts (extra, may be empty lists), autoscaled (whether an HPA may own its replica count).
*/}}
{{- define "ordergraph.deployment" -}}
{{- $root := .root -}}
{{- $component := .component -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "ordergraph.fullname" . }}
  labels:
    {{- include "ordergraph.labels" . | nindent 4 }}
spec:
  {{- if not (and .autoscaled $component.autoscaling.enabled) }}
  replicas: {{ $component.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }
  selector:
    matchLabels:
      {{- include "ordergraph.selector" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "ordergraph.labels" . | nindent 8 }}
      annotations:
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $component.port | quote }}
        prometheus.io/path: /metrics
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: {{ include "ordergraph.terminationGracePeriodSeconds" $root }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      containers:
        - name: {{ .name }}
          image: {{ printf "%s/%s:%s" $root.Values.image.registry .name $root.Values.image.tag | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            - name: http
              containerPort: {{ $component.port }}
              protocol: TCP
          envFrom:
            {{- range $suffix := prepend .configMaps "config" }}
            - configMapRef:
                name: {{ printf "%s-%s" $root.Release.Name $suffix }}
            {{- end }}
          env:
            - name: PORT
              value: {{ $component.port | quote }}
            - name: JWT_SECRET
              valueFrom:
                secretKeyRef: { name: {{ include "ordergraph.secretName" $root }}, key: JWT_SECRET, optional: true }
            # The gateway signs each subgraph request with it, and the subgraphs serve nothing unsigned.
            - name: SUBGRAPH_SIGNING_SECRET
              valueFrom:
                secretKeyRef: { name: {{ include "ordergraph.secretName" $root }}, key: SUBGRAPH_SIGNING_SECRET }
            {{- with .env }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- range $key, $value := $component.env }}
            - name: {{ $key }}
              value: {{ $value | quote }}
            {{- end }}
          startupProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 2
            failureThreshold: 30
          livenessProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 10
            timeoutSeconds: 3
            failureThreshold: 3
          readinessProbe:
            httpGet: { path: /readyz, port: http }
            periodSeconds: 5
            timeoutSeconds: 3
            failureThreshold: 2
          lifecycle:
            preStop:
              sleep: { seconds: {{ $root.Values.drain.preStopSeconds }} }
          resources:
            {{- toYaml $component.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            # Node and its libraries may write temporary files; the root filesystem is read-only.
            - { name: tmp, mountPath: /tmp }
            {{- with .mounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir: { sizeLimit: 64Mi }
        {{- with .volumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "ordergraph.fullname" . }}
  labels:
    {{- include "ordergraph.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "ordergraph.selector" . | nindent 4 }}
  ports:
    - name: http
      port: {{ $component.port }}
      targetPort: http
      protocol: TCP
{{- end -}}

{{/* How a subgraph's name appears in environment variable names (<NAME>_URL, SUBGRAPH_<NAME>_URL), as in npm start. */}}
{{- define "ordergraph.envName" -}}
{{ . | upper | replace "-" "_" }}
{{- end -}}

{{/* The in-cluster GraphQL URL of a subgraph. */}}
{{- define "ordergraph.subgraphUrl" -}}
{{ printf "http://%s-%s:%v/graphql" .root.Release.Name .name (index .root.Values.subgraphs .name).port }}
{{- end -}}

{{- define "ordergraph.mongoEnv" -}}
- name: MONGO_URL
  valueFrom:
    secretKeyRef: { name: {{ include "ordergraph.secretName" .root }}, key: {{ printf "%s_MONGO_URL" (include "ordergraph.envName" .name) }} }
{{- end -}}

{{- define "ordergraph.redisEnv" -}}
- name: REDIS_URL
  valueFrom:
    secretKeyRef: { name: {{ include "ordergraph.secretName" . }}, key: REDIS_URL, optional: true }
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef: { name: {{ include "ordergraph.secretName" . }}, key: REDIS_PASSWORD, optional: true }
{{- end -}}
