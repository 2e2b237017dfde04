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
azure-v2: Azure's expected bandwidth per size. (RTTs come from `links.rttMs`, not from a profile.)
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

{{/* An image reference `<repository>:<tag>`; with global.imageRegistry the repository's last
path segment under that registry (values.yaml, section Images). Call with
(dict "image" $image "ctx" $); an empty tag takes the chart's appVersion. */}}
{{- define "testbed.image" -}}
{{- $repository := .image.repository }}
{{- with (.ctx.Values.global | default dict).imageRegistry }}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) (last (splitList "/" $repository)) }}
{{- end }}
{{- printf "%s:%s" $repository (toString (default .ctx.Chart.AppVersion .image.tag)) }}
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
{{- if include "testbed.linkRtt" (dict "ctx" $ "role" (ternary "middleware" "server" (eq $role "middleware"))) }}
{{- $tr := $v.links.toxiproxy.resources.requests | default dict }}
{{- $cpuM = add $cpuM (include "testbed.milliCpu" ($tr.cpu | default 0)) }}
{{- $memMi = add $memMi (include "testbed.mebibytes" ($tr.memory | default 0)) }}
{{- $roles = append $roles (printf "%s toxiproxy" $role) }}
{{- end }}
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
{{- /* Link RTTs: jitter within the RTT, and only the links the topology has. */}}
{{- range $key := list "clientMw" "mwServer" "clientServer" }}
{{- $rtt := get $v.links.rttMs $key | default 0 | float64 }}
{{- $jitter := get $v.links.jitterMs $key | default 0 | float64 }}
{{- if gt $jitter $rtt }}
{{- $messages = append $messages (printf "links.jitterMs.%s: %v ms exceeds links.rttMs.%s (%v ms); the jitter must be at most the RTT" $key $jitter $key $rtt) }}
{{- end }}
{{- end }}
{{- if and $v.middleware.enabled (gt ($v.links.rttMs.clientServer | default 0 | float64) 0.0) }}
{{- $messages = append $messages "links.rttMs.clientServer: the loadgens reach the servers directly only without a middleware (middleware.enabled=false); with one, set links.rttMs.clientMw and links.rttMs.mwServer" }}
{{- end }}
{{- if and (not $v.middleware.enabled) (gt ($v.links.rttMs.clientMw | default 0 | float64) 0.0) }}
{{- $messages = append $messages "links.rttMs.clientMw: there is no middleware (middleware.enabled=false); the loadgens' link to the servers is links.rttMs.clientServer" }}
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

{{/*
The RTT in ms of the link whose far end is a role's pods, as a string; "" when it has none.
Call with (dict "ctx" $ "role" "middleware") or (dict "ctx" $ "role" "server"): the middleware
pods end the loadgens' link, the server pods the middleware's (or, without a middleware, the
loadgens').
*/}}
{{- define "testbed.linkRtt" -}}
{{- $n := .ctx.Values.links }}
{{- $key := "clientMw" }}
{{- if eq .role "server" }}{{ $key = ternary "mwServer" "clientServer" .ctx.Values.middleware.enabled }}{{ end }}
{{- $rtt := get $n.rttMs $key | default 0 | float64 }}
{{- if gt $rtt 0.0 }}{{ printf "%s %v %v" $key $rtt (get $n.jitterMs $key | default 0 | float64) }}{{ end }}
{{- end }}

{{/* The port a role's process listens on: its own, or behind a sidecar its own + portOffset. Call with (dict "ctx" $ "role" "server" "port" 11211). */}}
{{- define "testbed.processPort" -}}
{{- if include "testbed.linkRtt" . }}{{ add .port .ctx.Values.links.toxiproxy.portOffset }}{{ else }}{{ .port }}{{ end }}
{{- end }}

{{/*
The latency sidecar of a role's pods (only when its link has an RTT): toxiproxy-server with one
proxy from the role's port (the one the Service targets, named `portName`) to the process on
the pod's loopback at port + portOffset, and a `latency` toxic of half the RTT (and half the
jitter) on each direction, created through its HTTP API with busybox wget. The container exits
non-zero with an `error:` line when the proxy or a toxic cannot be created, and is ready only
while both toxics exist. Call with (dict "ctx" $ "role" "server" "port" 11211 "portName" "memcache").
*/}}
{{- define "testbed.toxiproxySidecar" -}}
{{- $link := include "testbed.linkRtt" . }}
{{- if $link }}
{{- $t := .ctx.Values.links.toxiproxy }}
{{- $parts := splitList " " $link }}
- name: toxiproxy
  image: {{ include "testbed.image" (dict "image" $t.image "ctx" .ctx) | quote }}
  imagePullPolicy: {{ $t.image.pullPolicy }}
  command: ["/bin/sh", "-c"]
  args:
    - |
      api="http://127.0.0.1:$API_PORT"
      fail() { echo "toxiproxy: error: $*" >&2; kill "$server" 2>/dev/null; exit 1; }
      toxiproxy-server -host 127.0.0.1 -port "$API_PORT" -seed 1 &
      server=$!
      trap 'kill -TERM "$server"; wait "$server"; exit 0' TERM INT
      tries=0
      until wget -q -O /dev/null "$api/version" 2>/dev/null; do
        kill -0 "$server" 2>/dev/null || fail "toxiproxy-server exited before its API answered"
        tries=$((tries + 1))
        [ "$tries" -lt 100 ] || fail "toxiproxy-server's API ($api) did not answer within 10 s"
        sleep 0.1
      done
      post() {  # post PATH JSON WHAT
        out=$(wget -q -O - --header 'Content-Type: application/json' --post-data "$2" "$api$1" 2>&1) \
          || fail "cannot create $3 (POST $1): $out"
      }
      post /proxies "{\"name\":\"$PROXY\",\"listen\":\"0.0.0.0:$LISTEN_PORT\",\"upstream\":\"127.0.0.1:$UPSTREAM_PORT\",\"enabled\":true}" "the proxy $PROXY"
      for stream in upstream downstream; do
        post "/proxies/$PROXY/toxics" "{\"name\":\"latency-$stream\",\"type\":\"latency\",\"stream\":\"$stream\",\"toxicity\":1.0,\"attributes\":{\"latency\":$LATENCY_MS,\"jitter\":$JITTER_MS}}" "the $stream latency toxic of $PROXY"
      done
      echo "toxiproxy: $PROXY: 0.0.0.0:$LISTEN_PORT -> 127.0.0.1:$UPSTREAM_PORT, latency $LATENCY_MS ms +- $JITTER_MS ms each way"
      wait "$server"
  env:
    - name: PROXY
      value: {{ index $parts 0 | quote }}
    - name: LISTEN_PORT
      value: {{ .port | quote }}
    - name: UPSTREAM_PORT
      value: {{ add .port $t.portOffset | quote }}
    - name: LATENCY_MS
      value: {{ divf (index $parts 1) 2 | toString | quote }}
    - name: JITTER_MS
      value: {{ divf (index $parts 2) 2 | toString | quote }}
    - name: API_PORT
      value: {{ $t.apiPort | quote }}
    - name: LOG_LEVEL  # toxiproxy-server's; without it, a debug line per request
      value: info
    {{- if gt (int $t.gomaxprocs) 0 }}
    - name: GOMAXPROCS
      value: {{ $t.gomaxprocs | quote }}
    {{- end }}
  ports:
    - name: {{ .portName }}
      containerPort: {{ .port }}
  # Ready only while the proxy and both of its latency toxics exist.
  readinessProbe:
    exec:
      command:
        - /bin/sh
        - -c
        - >-
          t=$(wget -q -O - "http://127.0.0.1:$API_PORT/proxies/$PROXY/toxics")
          && echo "$t" | grep -q '"latency-upstream"'
          && echo "$t" | grep -q '"latency-downstream"'
    periodSeconds: 5
  resources:
    {{- toYaml $t.resources | nindent 4 }}
  securityContext:
    {{- toYaml .ctx.Values.containerSecurityContext | nindent 4 }}
{{- end }}
{{- end }}

{{/*
collectd's configuration as the memcached exporter (files/collectd-memcached.conf): the memcached
of the same pod at 127.0.0.1:<port> (the process's port, behind the links' sidecar when there is
one), served on monitoring.exporters.memcached.port. Args: ctx, port.
*/}}
{{- define "testbed.memcachedExporterConfig" -}}
{{- $e := .ctx.Values.monitoring.exporters.memcached -}}
{{- $conf := .ctx.Files.Get "files/collectd-memcached.conf" | replace "@MEMCACHED_HOST@" "127.0.0.1" | replace "@MEMCACHED_PORT@" (toString .port) -}}
{{- $conf | replace "@LISTEN_HOST@" "0.0.0.0" | replace "@PORT@" (toString $e.port) | replace "@INTERVAL_S@" (toString (int $e.intervalSeconds)) -}}
{{- end }}
