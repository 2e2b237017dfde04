{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "testbed.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Object name prefix: the release name if it already contains the chart name. */}}
{{- define "testbed.fullname" -}}
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

{{- define "testbed.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "testbed.labels" -}}
helm.sh/chart: {{ include "testbed.chart" . }}
{{ include "testbed.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "testbed.selectorLabels" -}}
app.kubernetes.io/name: {{ include "testbed.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Selector labels of one role. Call with (dict "ctx" $ "component" "memcached" "role" "server").
`cachelab.dev/role` is what the network policies and the experiment Jobs select on.
*/}}
{{- define "testbed.componentSelectorLabels" -}}
{{ include "testbed.selectorLabels" .ctx }}
app.kubernetes.io/component: {{ .component }}
cachelab.dev/role: {{ .role }}
{{- end }}

{{- define "testbed.componentLabels" -}}
{{ include "testbed.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
cachelab.dev/role: {{ .role }}
{{- end }}

{{/* Node label value of a pool: its `labelValue`, else its name. Call with (dict "ctx" $ "pool" "a1"). */}}
{{- define "testbed.poolLabelValue" -}}
{{- get (get .ctx.Values.nodePools.sizes .pool | default dict) "labelValue" | default .pool }}
{{- end }}

{{/* nodeSelector for a pool. Call with (dict "ctx" $ "pool" "a1"). */}}
{{- define "testbed.poolNodeSelector" -}}
{{ .ctx.Values.nodePools.labelKey }}: {{ include "testbed.poolLabelValue" . | quote }}
{{- end }}

{{/* Tolerations and image pull secrets of every pod (pod spec level). Call with $. */}}
{{- define "testbed.podScheduling" -}}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Quantity to millicores ("500m", "1", 2, "1.5"). */}}
{{- define "testbed.milliCpu" -}}
{{- $q := toString . }}
{{- if hasSuffix "m" $q }}{{ trimSuffix "m" $q | int }}{{ else }}{{ mulf (float64 $q) 1000 | int }}{{ end }}
{{- end }}

{{/* Quantity to MiB ("768Mi", "1Gi", "512M", bytes). */}}
{{- define "testbed.mebibytes" -}}
{{- $q := toString . }}
{{- if hasSuffix "Gi" $q }}{{ mulf (float64 (trimSuffix "Gi" $q)) 1024 | int }}
{{- else if hasSuffix "Mi" $q }}{{ float64 (trimSuffix "Mi" $q) | int }}
{{- else if hasSuffix "Ki" $q }}{{ divf (float64 (trimSuffix "Ki" $q)) 1024 | int }}
{{- else if hasSuffix "G" $q }}{{ divf (mulf (float64 (trimSuffix "G" $q)) 1000000000) 1048576 | int }}
{{- else if hasSuffix "M" $q }}{{ divf (mulf (float64 (trimSuffix "M" $q)) 1000000) 1048576 | int }}
{{- else }}{{ divf (float64 $q) 1048576 | int }}{{ end }}
{{- end }}


{{/* Container resources: the role's own, else the pool's. Call with (dict "ctx" $ "pool" "a1" "resources" .Values.x.resources). */}}
{{- define "testbed.resources" -}}
{{- if .resources }}
{{- toYaml .resources }}
{{- else }}
{{- toYaml (get (get .ctx.Values.nodePools.sizes .pool | default dict) "resources" | default dict) }}
{{- end }}
{{- end }}

{{/*
Bandwidth annotations of a role pod. Call with (dict "ctx" $ "role" "server" "pool" "a1").
asl2017, asl2019: measured per role in the ASL 2017 §2.4 and ASL 2019 reports (iperf).
azure-v2: Azure's expected bandwidth per size. (The RTT of asl2019 is the network's own here.)
*/}}
{{- define "testbed.bandwidthAnnotations" -}}
{{- $profile := .ctx.Values.bandwidth.profile }}
{{- $egress := "" }}
{{- if eq $profile "asl2017" }}
{{- $egress = get (dict "client" "200M" "middleware" "700M" "server" "100M") .role }}
{{- else if eq $profile "asl2019" }}
{{- $egress = get (dict "client" "180M" "middleware" "710M" "server" "88M") .role }}
{{- else if eq $profile "azure-v2" }}
{{- $egress = get (dict "a1" "250M" "a2" "500M" "a4" "1000M") .pool }}
{{- end }}
{{- if $egress }}
kubernetes.io/egress-bandwidth: {{ $egress | quote }}
{{- end }}
{{- end }}

{{/* One-per-node anti-affinity for a role. Call with (dict "ctx" $ "component" "memcached" "role" "server"). */}}
{{- define "testbed.spreadAffinity" -}}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "testbed.componentSelectorLabels" . | nindent 10 }}
{{- end }}

{{- define "testbed.image" -}}
{{- printf "%s:%s" .repository (toString .tag) }}
{{- end }}

{{/* Stable DNS names of the servers the middleware talks to, as host:port. */}}
{{- define "testbed.serverList" -}}
{{- $backend := .Values.middleware.backend }}
{{- $sts := printf "%s-%s" (include "testbed.fullname" .) $backend }}
{{- $cfg := get .Values $backend }}
{{- $servers := list }}
{{- range $i := until (int $cfg.replicas) }}
{{- $servers = append $servers (printf "%s-%d.%s.%s.svc.%s:%d" $sts $i $sts $.Release.Namespace $.Values.clusterDomain (int $cfg.port)) }}
{{- end }}
{{- join " " $servers }}
{{- end }}

{{/* true when ServiceMonitors should be rendered. */}}
{{- define "testbed.serviceMonitorsEnabled" -}}
{{- $v := .Values.monitoring.serviceMonitors.enabled }}
{{- if eq (toString $v) "auto" }}
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}true{{ end }}
{{- else if eq (toString $v) "true" }}true
{{- end }}
{{- end }}

{{/* Checks between keys that the schema cannot express; fails with the key and the fix. */}}
{{- define "testbed.validateValues" -}}
{{- $messages := list }}
{{- $v := .Values }}
{{- range $role := list "memcached" "redis" "middleware" }}
{{- $pool := (get $v $role).pool }}
{{- if not (hasKey $v.nodePools.sizes $pool) }}
{{- $messages = append $messages (printf "%s.pool: %q is not a pool in nodePools.sizes (known: %s)" $role $pool (keys $v.nodePools.sizes | sortAlpha | join ", ")) }}
{{- end }}
{{- end }}
{{- if not (hasKey $v.nodePools.sizes $v.clients.pool) }}
{{- $messages = append $messages (printf "clients.pool: %q is not a pool in nodePools.sizes (known: %s)" $v.clients.pool (keys $v.nodePools.sizes | sortAlpha | join ", ")) }}
{{- end }}
{{- if $v.middleware.enabled }}
{{- $backend := get $v $v.middleware.backend }}
{{- if not $backend.enabled }}
{{- $messages = append $messages (printf "middleware.backend: %q is not enabled; set %s.enabled=true or change middleware.backend" $v.middleware.backend $v.middleware.backend) }}
{{- else if gt (int $v.middleware.replication) (int $backend.replicas) }}
{{- $messages = append $messages (printf "middleware.replication: %d exceeds %s.replicas (%d); use at most %d" (int $v.middleware.replication) $v.middleware.backend (int $backend.replicas) (int $backend.replicas)) }}
{{- end }}
{{- if and (gt (int $v.middleware.replication) 1) (ne $v.middleware.routing "hash") }}
{{- $messages = append $messages (printf "middleware.replication: %d needs middleware.routing=hash (got %s)" (int $v.middleware.replication) $v.middleware.routing) }}
{{- end }}
{{- end }}
{{- /* Pod fit: the roles that may share a node of a pool (one pod per role and node) must fit it together. */}}
{{- $exporters := $v.monitoring.exporters }}
{{- range $pool, $size := $v.nodePools.sizes }}
{{- $cpuM := 0 }}{{ $memMi := 0 }}{{ $roles := list }}
{{- range $role := list "memcached" "redis" "middleware" }}
{{- $cfg := get $v $role }}
{{- if and $cfg.enabled (eq $cfg.pool $pool) }}
{{- $r := include "testbed.resources" (dict "ctx" $ "pool" $pool "resources" $cfg.resources) | fromYaml }}
{{- $req := $r.requests | default dict }}
{{- $cpuM = add $cpuM (include "testbed.milliCpu" ($req.cpu | default 0)) }}
{{- $memMi = add $memMi (include "testbed.mebibytes" ($req.memory | default 0)) }}
{{- $roles = append $roles $role }}
{{- if and $exporters.enabled (ne $role "middleware") }}
{{- $cpuM = add $cpuM (include "testbed.milliCpu" ($exporters.resources.requests.cpu | default 0)) }}
{{- $memMi = add $memMi (include "testbed.mebibytes" ($exporters.resources.requests.memory | default 0)) }}
{{- $roles = append $roles (printf "%s exporter" $role) }}
{{- end }}
{{- end }}
{{- end }}
{{- $nodeCpuM := mulf (float64 $size.cpu) 1000 | int }}
{{- $nodeMemMi := mulf (float64 $size.memoryGiB) 1024 | int }}
{{- if gt (int $cpuM) $nodeCpuM }}
{{- $messages = append $messages (printf "nodePools.sizes.%s: the pods that share one %s node (%s) request %dm CPU, more than its %dm; lower their requests or move a role to another pool" $pool $pool (join ", " $roles) (int $cpuM) $nodeCpuM) }}
{{- end }}
{{- if gt (int $memMi) $nodeMemMi }}
{{- $messages = append $messages (printf "nodePools.sizes.%s: the pods that share one %s node (%s) request %dMi memory, more than its %dMi" $pool $pool (join ", " $roles) (int $memMi) $nodeMemMi) }}
{{- end }}
{{- end }}
{{- /* Item memory against the container's memory limit (the process needs headroom beyond its items). */}}
{{- range $role := list "memcached" "redis" }}
{{- $cfg := get $v $role }}
{{- if $cfg.enabled }}
{{- $r := include "testbed.resources" (dict "ctx" $ "pool" $cfg.pool "resources" $cfg.resources) | fromYaml }}
{{- $limit := ($r.limits | default dict).memory }}
{{- $items := ternary $cfg.memoryMiB $cfg.maxmemoryMiB (eq $role "memcached") | int }}
{{- $key := ternary "memcached.memoryMiB" "redis.maxmemoryMiB" (eq $role "memcached") }}
{{- if $limit }}
{{- $limitMi := include "testbed.mebibytes" $limit | int }}
{{- if gt (add $items 64) $limitMi }}
{{- $messages = append $messages (printf "%s: %d MiB of items plus 64 MiB for the process exceed the container's memory limit %s (%d Mi): the server would be OOM-killed once full; lower %s or raise the limit" $key $items (toString $limit) $limitMi $key) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- if not (or $v.memcached.enabled $v.redis.enabled) }}
{{- $messages = append $messages "memcached.enabled, redis.enabled: at least one backend must be enabled" }}
{{- end }}
{{- if $messages }}
{{- printf "\nVALUES VALIDATION:\n%s" (join "\n" $messages) | fail }}
{{- end }}
{{- end }}

{{/*
At install on a real cluster: every pool in use must have a node with its label, or its pods
would stay Pending while helm reports "deployed". `lookup` is empty under `helm template` and
--dry-run, where the check is skipped. Off with nodePools.checkNodes=false.
*/}}
{{- define "testbed.checkNodes" -}}
{{- $v := .Values }}
{{- if $v.nodePools.checkNodes }}
{{- $nodes := (lookup "v1" "Node" "" "").items | default list }}
{{- if $nodes }}
{{- $pools := list $v.clients.pool }}
{{- range $role := list "memcached" "redis" "middleware" }}{{ if (get $v $role).enabled }}{{ $pools = append $pools (get $v $role).pool }}{{ end }}{{ end }}
{{- $missing := list }}
{{- range $pool := $pools | uniq }}
{{- $want := include "testbed.poolLabelValue" (dict "ctx" $ "pool" $pool) }}
{{- $found := false }}
{{- range $nodes }}{{ if eq (get (.metadata.labels | default dict) $v.nodePools.labelKey | default "") $want }}{{ $found = true }}{{ end }}{{ end }}
{{- if not $found }}{{ $missing = append $missing (printf "%s (%s=%s)" $pool $v.nodePools.labelKey $want) }}{{ end }}
{{- end }}
{{- if $missing }}
{{- printf "\nNODE POOLS: no node carries the label of pool(s) %s, so their pods would stay Pending. Label nodes (kubectl label node <node> %s=<pool>), set nodePools.labelKey to the label your nodes carry (AKS: agentpool), map pools with nodePools.sizes.<pool>.labelValue, or set nodePools.checkNodes=false" (join ", " $missing) $v.nodePools.labelKey | fail }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* Egress rule for cluster DNS. */}}
{{- define "testbed.dnsEgress" -}}
- to:
    - namespaceSelector: {}
  ports:
    - protocol: UDP
      port: 53
    - protocol: TCP
      port: 53
{{- end }}
