# SPDX-License-Identifier: MIT
# fpgactl.bash - bash completion for fpgactl: commands, options, and the
# channel names of the fpgad that --url (or $FPGAD_URL) reaches, c2h ones
# for capture and h2c ones for send.

# _fpgactl_channels URL DIR: channel names from `fpgactl status`, of
# direction DIR (c2h, h2c) or all when DIR is empty.
_fpgactl_channels()
{
	local url=$1 dir=$2
	fpgactl ${url:+--url "$url"} status 2>/dev/null |
		awk -v dir="$dir" 'f && NF && (dir == "" || $2 == dir) { print $1 }
				   /^CHANNEL / { f = 1 }'
}

_fpgactl()
{
	local commands="status clients version stats reset capture send topo"
	local options="--url --json --count --verify --newest --poll-us --shared --reconnect --timeout --help"
	local line=${COMP_LINE:0:COMP_POINT} words cur prev i w cmd="" url="" npos=0

	# Words split at blanks only: bash's COMP_WORDS also splits URLs at
	# ':' and '='.
	COMPREPLY=()
	read -r -a words <<< "$line"
	[[ $line == *[[:blank:]] ]] && words+=("")
	((${#words[@]} >= 2)) || return
	cur=${words[-1]}
	prev=${words[-2]}
	[[ $cur == *[=:]* ]] && return

	# The command, the URL and how many positional words precede the cursor.
	for ((i = 1; i < ${#words[@]} - 1; i++)); do
		w=${words[i]}
		case $w in
		--url) url=${words[i+1]}; ((i++)) ;;
		--url=*) url=${w#--url=} ;;
		-n|--count|--poll-us|--timeout) ((i++)) ;;
		-*) ;;
		*) ((npos++)); [[ -z $cmd ]] && cmd=$w ;;
		esac
	done

	case $prev in
	--url|-n|--count|--poll-us|--timeout) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$options" -- "$cur"))
		return
	fi
	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		return
	fi
	if ((npos == 1)); then
		case $cmd in
		stats|reset) COMPREPLY=($(compgen -W "$(_fpgactl_channels "$url" "")" -- "$cur")) ;;
		capture) COMPREPLY=($(compgen -W "$(_fpgactl_channels "$url" c2h)" -- "$cur")) ;;
		send) COMPREPLY=($(compgen -W "$(_fpgactl_channels "$url" h2c)" -- "$cur")) ;;
		esac
	fi
}

complete -F _fpgactl fpgactl
