{{/* Pod annotations the test bed's fake kubelet reads (values: simulate).
A Job's are for that Job alone (for-job): a Job made from its pod template
to run another command (an upgrade's check, expand or contract) runs as it would. */}}
{{- define "keystone.simulate" -}}
{{- $ctx := index . 0 -}}
{{- $key := index . 1 -}}
{{- $job := "" -}}
{{- if gt (len .) 2 }}{{ $job = index . 2 }}{{ end -}}
{{- with index $ctx.Values.simulate.fail $key }}
bed.lcm.openstack.org/fail: {{ . | quote }}
{{- end }}
{{- with index $ctx.Values.simulate.duration $key }}
bed.lcm.openstack.org/duration: {{ . | quote }}
{{- end }}
{{- if and $job (or (index $ctx.Values.simulate.fail $key) (index $ctx.Values.simulate.duration $key)) }}
bed.lcm.openstack.org/for-job: {{ $job | quote }}
{{- end }}
{{- end -}}

{{/*
A job as openstack-helm renders it: its own ServiceAccount, a Role to read
the jobs and endpoints it waits for, the RoleBinding, and the Job.
list: context, job name (db-sync), values key (db_sync), image tag key,
annotations (dict, may be empty), script name
*/}}
{{- define "keystone.job" -}}
{{- $ctx := index . 0 -}}
{{- $name := index . 1 -}}
{{- $key := index . 2 -}}
{{- $image := index $ctx.Values.images.tags (index . 3) -}}
{{- $annotations := index . 4 -}}
{{- $sa := printf "keystone-%s" $name -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $sa }}
{{- with $annotations }}
  annotations:
{{ toYaml . | indent 4 }}
{{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $sa }}
{{- with $annotations }}
  annotations:
{{ toYaml . | indent 4 }}
{{- end }}
rules:
  - apiGroups: ["", "batch"]
    resources: [jobs, endpoints, services]
    verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $sa }}
{{- with $annotations }}
  annotations:
{{ toYaml . | indent 4 }}
{{- end }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $sa }}
subjects:
  - kind: ServiceAccount
    name: {{ $sa }}
    namespace: {{ $ctx.Release.Namespace }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: keystone-{{ $name }}
  labels:
    application: keystone
    component: {{ $name }}
{{- with $annotations }}
  annotations:
{{ toYaml . | indent 4 }}
{{- end }}
spec:
  backoffLimit: {{ $ctx.Values.jobs.backoff_limit }}
  template:
    metadata:
      labels:
        application: keystone
        component: {{ $name }}
      annotations:
        {{- include "keystone.simulate" (list $ctx $key (printf "keystone-%s" $name)) | nindent 8 }}
    spec:
      serviceAccountName: {{ $sa }}
      restartPolicy: Never
      containers:
        - name: {{ $name }}
          image: {{ $image }}
          command: [/tmp/{{ index . 5 }}]
          terminationMessagePolicy: FallbackToLogsOnError
          {{- with $ctx.Values.lifecycle.backupRef | default $ctx.Values.backup.ref }}
          env:
            - {name: BACKUP_REF, value: {{ . | quote }}}
          {{- end }}
          envFrom:
            - secretRef:
                name: keystone-db
            - secretRef:
                name: keystone-admin
          volumeMounts:
            - {name: keystone-bin, mountPath: /tmp/{{ index . 5 }}, subPath: {{ index . 5 }}, readOnly: true}
            - {name: keystone-etc, mountPath: /etc/keystone/keystone.conf, subPath: keystone.conf, readOnly: true}
      volumes:
        - name: keystone-bin
          configMap: {name: keystone-bin, defaultMode: 0555}
        - name: keystone-etc
          configMap: {name: keystone-etc}
{{- end -}}

{{/* Whether a phase-only job renders: its switch, or the phase it belongs to. */}}
{{- define "keystone.phaseJob" -}}
{{- $ctx := index . 0 -}}
{{- if or (index $ctx.Values.manifests (index . 1)) (eq $ctx.Values.lifecycle.phase (index . 2)) }}true{{ end -}}
{{- end -}}
