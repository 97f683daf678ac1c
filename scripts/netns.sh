# shellcheck shell=bash
# Network namespaces for data-parallel runs "between hosts" on one machine (sourced by
# tests/cli/torch_netns.sh and scripts/netns_scaling.sh; needs root or CAP_NET_ADMIN and iproute2).
#
#   netns_pair TAG SUBNET        two namespaces TAGr0, TAGr1 joined by one veth pair (devices
#                                TAGr0, TAGr1), addresses SUBNET.1/24 and SUBNET.2/24
#   netns_star TAG N SUBNET      N rank namespaces TAGr0 .. TAGr(N-1), each with one veth (TAGri,
#                                address SUBNET.(i+1)/24) to a bridge TAGbr inside a switch
#                                namespace TAGsw (its ports TAGpi): the bridge, too, lives in a
#                                namespace this script made
#   netns_limit MBIT             a tbf qdisc of MBIT Mbit/s on the egress of every link end made
#                                above (so each rank's link carries at most MBIT up and MBIT down);
#                                0 removes the limits
#   netns_exec I CMD...          run CMD in rank I's namespace
#   netns_cleanup                delete every namespace made above (their veths go with them)
#   netns_stop PID...            stop processes started in them: TERM, then KILL after 1 s
#   netns_wait PID...            wait for every process; non-zero when one of them failed
#
# Every device is created inside a namespace of its own run (`ip link add ... netns NS`), never in
# the caller's; no namespace gets a default route, NAT or a link to the host, so nothing sent in
# them can leave. TAG must be unique per run (include $$) and at most 9 characters.
NETNS_NAMES=()   # namespaces made, in order (cleanup deletes them all)
NETNS_RANK_NS=() # namespace of rank i
NETNS_RANK_DEV=() # rank i's interface (for GLOO_SOCKET_IFNAME)
NETNS_LINKS=()   # "NS DEV" of every link end that netns_limit shapes

netns_add() {  # NAME: creates the namespace and brings its loopback up
  ip netns add "$1" || return 1
  NETNS_NAMES+=("$1")
  ip -n "$1" link set lo up
}

netns_pair() {
  local tag=$1 subnet=$2 i
  [ ${#tag} -le 9 ] || { echo "netns: the tag $tag is longer than 9 characters." >&2; return 1; }
  for i in 0 1; do netns_add "${tag}r$i" || return 1; done
  ip link add "${tag}r0" netns "${tag}r0" type veth peer name "${tag}r1" netns "${tag}r1" || return 1
  for i in 0 1; do
    ip -n "${tag}r$i" addr add "$subnet.$((i + 1))/24" dev "${tag}r$i" || return 1
    ip -n "${tag}r$i" link set "${tag}r$i" up || return 1
    NETNS_RANK_NS+=("${tag}r$i")
    NETNS_RANK_DEV+=("${tag}r$i")
    NETNS_LINKS+=("${tag}r$i ${tag}r$i")
  done
}

netns_star() {
  local tag=$1 n=$2 subnet=$3 i sw="${1}sw"
  [ ${#tag} -le 9 ] || { echo "netns: the tag $tag is longer than 9 characters." >&2; return 1; }
  netns_add "$sw" || return 1
  ip -n "$sw" link add "${tag}br" type bridge || return 1
  ip -n "$sw" link set "${tag}br" up || return 1
  for ((i = 0; i < n; i++)); do
    netns_add "${tag}r$i" || return 1
    ip link add "${tag}r$i" netns "${tag}r$i" type veth peer name "${tag}p$i" netns "$sw" || return 1
    ip -n "$sw" link set "${tag}p$i" master "${tag}br" || return 1
    ip -n "$sw" link set "${tag}p$i" up || return 1
    ip -n "${tag}r$i" addr add "$subnet.$((i + 1))/24" dev "${tag}r$i" || return 1
    ip -n "${tag}r$i" link set "${tag}r$i" up || return 1
    NETNS_RANK_NS+=("${tag}r$i")
    NETNS_RANK_DEV+=("${tag}r$i")
    NETNS_LINKS+=("${tag}r$i ${tag}r$i" "$sw ${tag}p$i")
  done
}

# tbf: rate MBIT, a bucket of 2 ms at that rate (at least 10 frames of 1514 bytes), and a queue
# of up to 1 s at that rate, so that TCP's bursts queue rather than drop.
netns_limit() {
  local mbit=$1 link ns dev burst
  burst=$((mbit * 1000000 / 8 / 500))
  [ "$burst" -ge 15140 ] || burst=15140
  for link in "${NETNS_LINKS[@]}"; do
    read -r ns dev <<<"$link"
    if [ "$mbit" -eq 0 ]; then
      tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null
    else
      tc -n "$ns" qdisc replace dev "$dev" root tbf rate "${mbit}mbit" burst "$burst" latency 1s ||
        return 1
    fi
  done
  return 0
}

netns_exec() {
  local i=$1
  shift
  ip netns exec "${NETNS_RANK_NS[$i]}" "$@"
}

netns_stop() {
  local p
  # TERM first: `timeout` passes it on to blr (a KILL would orphan blr until its --dist-timeout)
  for p in "$@"; do kill -TERM "$p" 2>/dev/null; done
  [ $# -eq 0 ] || sleep 1
  for p in "$@"; do kill -KILL "$p" 2>/dev/null; done
}

netns_wait() {
  local p ok=0
  for p in "$@"; do wait "$p" || ok=1; done
  return "$ok"
}

netns_cleanup() {
  local ns
  for ns in "${NETNS_NAMES[@]}"; do ip netns del "$ns" 2>/dev/null; done
  NETNS_NAMES=()
  NETNS_RANK_NS=()
  NETNS_RANK_DEV=()
  NETNS_LINKS=()
}
