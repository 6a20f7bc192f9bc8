# SPDX-License-Identifier: MIT
# fpgactl.bash - bash completion for fpgactl: commands, the options each
# command takes, the cards that run (--card), the channel names of the
# fpgad that --url or --card (or $FPGAD_URL, $FPGAD_CARD) reaches (c2h ones
# for capture, h2c ones for send, any number for watch and bench), the
# commands for help, and file names for read and write.

# _fpgactl_channels URL DIR [CARD]: channel names from `fpgactl channels`,
# of direction DIR (c2h, h2c) or all when DIR is empty.
_fpgactl_channels()
{
	local url=$1 dir=$2 card=${3:-}
	fpgactl ${url:+--url "$url"} ${card:+--card "$card"} channels 2>/dev/null |
		awk -v dir="$dir" 'NR > 1 && NF && (dir == "" || $2 == dir) { print $1 }'
}

# _fpgactl_options CMD NURL: the options CMD takes (every option before the
# command); --url again only where several may be given (status).
_fpgactl_options()
{
	local cmd=$1 nurl=$2 o="--json --help"
	case $cmd in
	"") o="$o --version -n --count --interval --verify --newest --poll-us --shared --reconnect --timeout" ;;
	status) o="$o --timeout" ;;
	watch) o="$o -n --count --interval --timeout" ;;
	capture) o="$o -n --count --verify --newest --poll-us --shared --reconnect --timeout" ;;
	send|bench|validate) o="$o -n --count --timeout" ;;
	read|write) o="$o --timeout" ;;
	esac
	if [[ -z $cmd || $cmd == status ]] || ((nurl == 0)); then
		o="$o --url"
	fi
	((nurl == 0)) && o="$o --card"
	case $cmd in
	""|status|channels|clients|version|topo|validate) ((nurl == 0)) && o="$o --all" ;;
	esac
	echo "$o"
}

_fpgactl()
{
	local commands="status channels watch clients version stats reset capture send topo probe bench validate read write help"
	local line=${COMP_LINE:0:COMP_POINT} words cur prev i w cmd="" url="" card="" nurl=0 npos=0
	local -a pos=()

	# Words split at blanks only: bash's COMP_WORDS also splits URLs at
	# ':' and '='.
	COMPREPLY=()
	read -r -a words <<< "$line"
	[[ $line == *[[:blank:]] ]] && words+=("")
	((${#words[@]} >= 2)) || return
	cur=${words[-1]}
	prev=${words[-2]}
	[[ $cur == *[=:]* ]] && return

	# The command, the URL (the first --url), and the positional words
	# that precede the cursor, the command's included.
	for ((i = 1; i < ${#words[@]} - 1; i++)); do
		w=${words[i]}
		case $w in
		--url) [[ -z $url ]] && url=${words[i+1]}; ((++nurl, ++i)) ;;
		--url=*) [[ -z $url ]] && url=${w#--url=}; ((++nurl)) ;;
		--card) card=${words[i+1]}; ((++i)) ;;
		-n|--count|--interval|--poll-us|--timeout) ((i++)) ;;
		-*) ;;
		*) pos+=("$w"); [[ -z $cmd ]] && cmd=$w ;;
		esac
	done
	npos=${#pos[@]}

	case $prev in
	--url|-n|--count|--interval|--poll-us|--timeout) return ;;
	--card)
		mapfile -t COMPREPLY < <(compgen -W "$(cd "${FPGAD_RUNTIME_ROOT:-/run/fpgad}" 2>/dev/null &&
			for d in */fpgad.sock; do [[ -S $d ]] && echo "${d%/fpgad.sock}"; done)" -- "$cur")
		return ;;
	esac
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_fpgactl_options "$cmd" "$nurl")" -- "$cur")
		return
	fi
	if [[ -z $cmd ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
		return
	fi
	case $cmd/$npos in
	help/1)
		mapfile -t COMPREPLY < <(compgen -W "${commands% help}" -- "$cur") ;;
	stats/1|reset/1)
		mapfile -t COMPREPLY < <(compgen -W "$(_fpgactl_channels "$url" "" "$card")" -- "$cur") ;;
	capture/1|probe/1)
		mapfile -t COMPREPLY < <(compgen -W "$(_fpgactl_channels "$url" c2h "$card")" -- "$cur") ;;
	send/1)
		mapfile -t COMPREPLY < <(compgen -W "$(_fpgactl_channels "$url" h2c "$card")" -- "$cur") ;;
	watch/*|bench/*)
		# Any number of channels, each once.
		local ch left=""
		for ch in $(_fpgactl_channels "$url" "" "$card"); do
			[[ " ${pos[*]:1} " == *" $ch "* ]] || left="$left $ch"
		done
		mapfile -t COMPREPLY < <(compgen -W "$left" -- "$cur") ;;
	read/3|write/2)
		# FILE ('-' is stdout or stdin).
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	esac
}

complete -F _fpgactl fpgactl
