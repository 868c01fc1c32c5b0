{{- define "svc.job" -}}
{{- $ctx := index . 0 -}}
{{- $name := index . 1 -}}
{{- $key := index . 2 -}}
{{- $job := index $ctx.Values.jobs $key | default dict -}}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ $ctx.Release.Name }}-{{ $name }}
  annotations:
    helm.sh/hook: post-install,post-upgrade
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
        {{- with $job.fail }}
        bed.lcm.openstack.org/fail: {{ . | quote }}
        {{- end }}
        {{- with $job.duration }}
        bed.lcm.openstack.org/duration: {{ . | quote }}
        {{- end }}
    spec:
      restartPolicy: Never
      serviceAccountName: {{ $ctx.Release.Name }}-{{ $name }}
      containers:
        - name: {{ $name }}
          image: registry.invalid/openstack/{{ $ctx.Chart.Name }}:{{ $ctx.Chart.AppVersion }}
          command: ["/tmp/{{ $name }}.sh"]
          envFrom:
            - secretRef:
                name: {{ $ctx.Release.Name }}-db
          volumeMounts:
            - {name: etc, mountPath: /etc/svc}
      volumes:
        - name: etc
          configMap:
            name: {{ $ctx.Release.Name }}-etc
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $ctx.Release.Name }}-{{ $name }}
{{- end -}}
