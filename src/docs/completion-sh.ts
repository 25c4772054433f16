/**
 * bash and zsh completion. Both scripts share a core in the syntax the two shells have in common:
 * the tree as case tables and the walker; each adds its own front end (COMPREPLY and compgen for
 * bash, _describe and compadd for zsh). Names the core uses are chosen to avoid zsh's special
 * parameters (path, commands, options, status).
 *
 * An option's value, as the core's __carectl_value holds it: its words ('a b c'), ',a b c' for a
 * comma-separated list of them, '<path>' for a file name, '<run:WHAT>' (',<run:WHAT>' for a list)
 * for the words `carectl __complete WHAT` prints when completing (profiles, tag names), '' for any
 * text.
 */
import {
  aliasesOf,
  argumentWords,
  completedOptions,
  HELP_COLUMNS_WORDS,
  pathKey,
  runCommand,
  SERVICE_OPTIONS,
  summary,
  valueOptions,
  type ValueKind,
} from './completion-data.js';

/** The service options the walk found, as bash and zsh pass them on. */
const SERVICE_WORDS = '"${__carectl_service[@]}"';
import type { CommandDoc } from './tree.js';

/** bash's readers of the word being completed and of the words to offer (the script's comments say why not compgen). */
const BASH_REPLY_LINES = `# The word being completed ($1, as typed) read as bash will read it: __carectl_typed is its value,
# __carectl_open the quote left open at its end ('' for none) and __carectl_opened where in the
# value that quote opens; __carectl_raw is $1 without a backslash left at its end (it escapes
# nothing yet), and __carectl_break where in it the text bash replaces begins (after the last : or
# = outside quotes, where COMP_WORDBREAKS holds them). Outside quotes a backslash takes the next
# character as it is; inside "…" only before \\ " $ \`; inside '…' never.
__carectl_unquote() {
  local word=$1 i=0 c
  __carectl_typed='' __carectl_open='' __carectl_opened=0 __carectl_raw=$1 __carectl_break=0
  while (( i < \${#word} )); do
    c=\${word:i:1}
    if [[ $__carectl_open == \\' ]]; then
      [[ $c == \\' ]] && __carectl_open='' || __carectl_typed+=$c
    elif [[ $c == \\\\ && ( -z $__carectl_open || \${word:i+1:1} == [\\\\\\"\\$\\\`] ) ]]; then
      i=$((i + 1))
      (( i < \${#word} )) || __carectl_raw=\${word%?}
      __carectl_typed+=\${word:i:1}
    elif [[ $c == \\" && -n $__carectl_open ]]; then
      __carectl_open=''
    elif [[ $c == [\\"\\'] ]]; then
      __carectl_open=$c __carectl_opened=\${#__carectl_typed}
    else
      [[ -z $__carectl_open && $c == [:=] && $COMP_WORDBREAKS == *"$c"* ]] && __carectl_break=$((i + 1))
      __carectl_typed+=$c
    fi
    i=$((i + 1))
  done
}

# The words of the line up to the cursor ($1) as typed, split at blanks outside quotes as bash
# splits them (COMP_WORDS splits at : and = as well: id:7004, --columns=id): __carectl_line.
__carectl_split_line() {
  local line=$1 i=0 c quote='' word='' started=''
  __carectl_line=()
  while (( i < \${#line} )); do
    c=\${line:i:1}
    if [[ -z $quote && $c == [[:blank:]] ]]; then
      [[ -n $started ]] && __carectl_line+=("$word")
      word='' started=''
    else
      started=1
      if [[ $c == \\\\ && $quote != \\' ]]; then
        word+=$c
        i=$((i + 1))
        c=\${line:i:1}
      elif [[ -z $quote && $c == [\\"\\'] ]]; then
        quote=$c
      elif [[ $c == "$quote" ]]; then
        quote=''
      fi
      word+=$c
    fi
    i=$((i + 1))
  done
  __carectl_line+=("$word")
}

# COMPREPLY from words, one a line on stdin, for the word typed ($2, as typed); $1 set: the word is a
# comma list, whose items typed so far are not offered again. Matched against the word as bash
# reads it, without compgen, which would run $(…) and \`…\` in words read from the service. Each is
# quoted for the shell: outside quotes what is typed stays and the rest of the word follows, quoted,
# from where bash replaces; after a quote left open bash replaces only what follows it and closes
# it, so inside "…" only \\ " $ \` are escaped (and a word ending in " closed here: bash would not),
# and inside '…' a word holding ' is left out.
__carectl_reply_lines() {
  local done='' cur word whole rest
  __carectl_unquote "$2"
  [[ -n $1 && $__carectl_typed == *,* ]] && done=\${__carectl_typed%,*},
  cur=\${__carectl_typed#"$done"}
  while IFS= read -r word; do
    [[ -n $word && $word == "$cur"* && ,$done != *,"$word",* ]] || continue
    whole=$done$word
    case $__carectl_open in
      \\') whole=\${whole:__carectl_opened}; [[ $whole == *\\'* ]] || COMPREPLY+=("$whole") ;;
      \\") whole=\${whole:__carectl_opened}; whole=\${whole//\\\\/\\\\\\\\}; whole=\${whole//\\"/\\\\\\"}; whole=\${whole//\\$/\\\\\\$}; whole=\${whole//\\\`/\\\\\\\`}; [[ $whole == *\\" ]] && whole+=\\"; COMPREPLY+=("$whole") ;;
      *)
        rest=\${word#"$cur"}
        [[ -n $rest ]] && rest=$(printf '%q' "$rest")
        whole=$__carectl_raw$rest
        COMPREPLY+=("\${whole:__carectl_break}") ;;
    esac
  done
}
`;

export function bashScript(commands: readonly CommandDoc[]): string {
  return `# bash completion for carectl, generated from its command tree by \`carectl completion bash\`.
# Load it with:  source <(carectl completion bash)
# or save it as ~/.local/share/bash-completion/completions/carectl
${core(commands)}
# Names out of 'name:description' lines.
__carectl_names() {
  local line
  while IFS= read -r line; do
    [ -n "$line" ] && printf '%s\\n' "\${line%%:*}"
  done
}

${BASH_REPLY_LINES}
# COMPREPLY for the value of an option ($1, as __carectl_value holds it) from the word typed ($2):
# words, items of a comma list, file names, words read now.
__carectl_complete_value() {
  local list='' what
  # a value that is not a file name never falls back to file names (complete -o default)
  compopt +o default 2>/dev/null
  [[ $1 == ,* ]] && list=1 && compopt -o nospace 2>/dev/null
  case $1 in
    *'<run:'*)
      what=\${1#*<run:}
      __carectl_reply_lines "$list" "$2" < <(${runCommand('${what%>}', SERVICE_WORDS)}) ;;
    '<path>')
      # bash quotes file names itself (-o filenames)
      compopt -o filenames 2>/dev/null
      __carectl_unquote "$2"
      mapfile -t COMPREPLY < <(compgen -f -- "$__carectl_typed") ;;
    *)
      __carectl_reply_lines "$list" "$2" < <(printf '%s\\n' \${1#,}) ;;
  esac
}

_carectl() {
  local cur prev='' flag='' at words __carectl_value __carectl_at __carectl_typed __carectl_open __carectl_opened __carectl_raw __carectl_break
  local -a __carectl_args __carectl_service __carectl_line
  __carectl_split_line "\${COMP_LINE:0:COMP_POINT}"
  local count=\${#__carectl_line[@]}
  cur=\${__carectl_line[count-1]}
  (( count > 1 )) && prev=\${__carectl_line[count-2]}
  if [[ $cur == --*=* ]]; then
    flag=\${cur%%=*}
    cur=\${cur#*=}
  elif [[ $prev == -* ]]; then
    flag=$prev
  fi
  __carectl_walk "\${__carectl_line[@]:1:count-2}"
  at=$__carectl_at
  if [[ -n $flag ]] && __carectl_find_value "$at" "$flag"; then
    __carectl_complete_value "$__carectl_value" "$cur"
    return 0
  fi
  if [[ $cur == -* ]]; then
    words=$(__carectl_all_options "$at" | __carectl_names)
  else
    words=$(__carectl_commands "$at" | __carectl_names)
    [[ -z $words ]] && words=$(__carectl_argument_words "$at")
    if [[ $words == '<run:'* ]]; then
      # words read now (ids): never file names in their place
      words=\${words#<run:}
      compopt +o default 2>/dev/null
      __carectl_reply_lines '' "$cur" < <(${runCommand('${words%>}', SERVICE_WORDS)})
      return 0
    fi
    [[ -z $words ]] && ! __carectl_takes_arguments "$at" && compopt +o default 2>/dev/null
  fi
  # nothing to offer: bash completes file names (complete -o default)
  __carectl_reply_lines '' "$cur" < <(printf '%s\\n' $words)
}

complete -o default -F _carectl carectl
`;
}

export function zshScript(commands: readonly CommandDoc[]): string {
  return `#compdef carectl
# zsh completion for carectl, generated from its command tree by \`carectl completion zsh\`.
# Load it after compinit with:  source <(carectl completion zsh)
# or save it as _carectl in a folder of $fpath.
${core(commands)}
_carectl() {
  local cur=\${words[CURRENT]} prev=\${words[CURRENT-1]} flag='' at __carectl_value __carectl_at
  local -a found __carectl_args __carectl_service
  if [[ $cur == --*=* ]]; then
    flag=\${cur%%=*}
    compset -P '*='
  elif [[ $prev == -* ]]; then
    flag=$prev
  fi
  __carectl_walk "\${(@)words[2,CURRENT-1]}"
  at=$__carectl_at
  if [[ -n $flag ]] && __carectl_find_value "$at" "$flag"; then
    local -a typed items
    if [[ $__carectl_value == *'<run:'* ]]; then
      # words read now, one a line (a name with a space is one word); compadd quotes them
      items=(\${(f)"$(${runCommand('${=${${__carectl_value#*<run:}%>}}', SERVICE_WORDS)})"})
      __carectl_value=\${__carectl_value%%<run:*}'<run>'
    else
      items=(\${=\${__carectl_value#,}})
    fi
    case $__carectl_value in
      '<path>') _files ;;
      ''|,) _message -e values 'value' ;;
      ,*)
        # complete the item after the last comma, leaving out those already there (as zsh reads them:
        # quotes and backslashes taken off); a comma typed next stays, a space removes it
        compset -P '*,'
        typed=(\${(s:,:)\${(Q)\${IPREFIX##*=}}})
        compadd -q -S , -- \${items:|typed} ;;
      *) compadd -- $items ;;
    esac
    return
  fi
  if [[ $cur == -* ]]; then
    found=(\${(f)"$(__carectl_all_options "$at")"})
    _describe -t options 'option' found
    return
  fi
  found=(\${(f)"$(__carectl_commands "$at")"})
  if (( \${#found} )); then
    _describe -t commands 'command' found
    return
  fi
  found=(\${=$(__carectl_argument_words "$at")})
  if [[ $found[1] == '<run:'* ]]; then
    # words read now (ids): never file names in their place
    found=(\${(f)"$(${runCommand('${=${${found[*]#<run:}%>}}', SERVICE_WORDS)})"})
    compadd -a found
  elif (( \${#found} )); then
    compadd -a found
  elif __carectl_takes_arguments "$at"; then
    _files
  fi
}

if [ "$funcstack[1]" = "_carectl" ]; then
  _carectl "$@"
else
  compdef _carectl carectl
fi
`;
}

/** The tree as case tables, and the walker, valid in both bash and zsh. */
function core(commands: readonly CommandDoc[]): string {
  return `
${treeTables(commands)}

${walker(commands)}
`;
}

/** What the tree says about a command: its subcommands, options, argument words and option values. */
function treeTables(commands: readonly CommandDoc[]): string {
  return `# Subcommands of a command ('' is carectl itself), as 'name:description' lines.
__carectl_commands() {
  case $1 in
${caseTable(commands, (command) => command.commands.map((sub) => `${sub.path[sub.path.length - 1]}:${summary(sub.description)}`))}
  esac
}

# Options of a command, not its parents', as 'name:description' lines.
__carectl_options() {
  case $1 in
${caseTable(commands, (command) => completedOptions(command).flatMap((option) => option.names.map((name) => `${name}:${summary(option.description)}`)))}
  esac
}

# The words the next positional argument of a command ($1) can be, given $2 arguments so far
# and the last of them ($3).
__carectl_positional() {
  case "$1|$2|$3" in
${argumentTable(commands)}
  esac
}

# The words the next positional argument of the command ($1) can be, after the arguments the
# walker found.
__carectl_argument_words() {
  local count=\${#__carectl_args[@]} last='' line
  if [ "$1" = help ] && (( count > 0 )); then
    # carectl help columns RESOURCE: the resources
    if [ "\${__carectl_args[*]}" = columns ]; then printf '%s ' ${HELP_COLUMNS_WORDS.join(' ')}; return 0; fi
    # carectl help GROUP …: the verbs of the command named so far
    __carectl_commands "$(__carectl_path "\${__carectl_args[@]}")" | while IFS= read -r line; do printf '%s ' "\${line%%:*}"; done
    return 0
  fi
  (( count > 0 )) && last=\${__carectl_args[-1]}
  __carectl_positional "$1" "$count" "$last"
}

# Whether the command ($1) takes positional arguments: file names are offered for them when
# nothing else is known, and nothing after a command that takes none.
__carectl_takes_arguments() {
  case $1 in
    ${commandsWithArguments(commands)}) return 0 ;;
  esac
  return 1
}

# Sets __carectl_value to what the option ($2) of the command ($1) takes (see the top of the
# script). Fails when that command has no such option with a value.
__carectl_option_value() {
  case "$1|$2" in
${valueTable(commands)}
    *) return 1 ;;
  esac
}`;
}

/**
 * Finding where the words lead: a command's parent, the value an option takes there or above, the
 * options in effect, and the walk over the words to the command they name and its arguments.
 */
function walker(commands: readonly CommandDoc[]): string {
  return `# The parent of a command.
__carectl_parent() {
  case $1 in
    *' '*) printf '%s\\n' "\${1% *}" ;;
    *) printf '\\n' ;;
  esac
}

# As __carectl_option_value, for an option of the command or of a command above it.
__carectl_find_value() {
  local at=$1
  while :; do
    __carectl_option_value "$at" "$2" && return 0
    [ -z "$at" ] && return 1
    at=$(__carectl_parent "$at")
  done
}

# Options of a command and of the commands above it; its own only where none of the global options apply (sandbox).
__carectl_all_options() {
  local at=$1
  while :; do
    __carectl_options "$at"
    case $at in ''|${
      commands
        .filter((command) => command.ownOptionsOnly)
        .map((command) => quote(pathKey(command)))
        .join('|') || "''"
    }) return 0 ;; esac
    at=$(__carectl_parent "$at")
  done
}

# The name of a command typed by an alias (conv, tag, ls), else the word as it is.
__carectl_canonical() {
  case "$1|$2" in
${aliasesOf(commands)
  .map(([parent, alias, name]) => `    ${quote(`${parent}|${alias}`)}) printf '%s\\n' ${quote(name)} ;;`)
  .join('\n')}
    *) printf '%s\\n' "$2" ;;
  esac
}

__carectl_has_command() {
  local line
  while IFS= read -r line; do
    [ "\${line%%:*}" = "$2" ] && return 0
  done <<< "$(__carectl_commands "$1")"
  return 1
}

${WALK}`;
}

/** The walk over the words typed so far, and the command path it finds. */
const WALK = `# Walks the words (carectl's arguments so far), skipping options and their values: sets
# __carectl_at to the command they name, __carectl_args to the positional arguments after it, and
# __carectl_service to the options typed that choose the service (for carectl __complete).
__carectl_walk() {
  local skip='' service='' word
  __carectl_at=''
  __carectl_args=()
  __carectl_service=()
  for word in "$@"; do
    if [ -n "$skip" ]; then
      skip=''
      # a service option goes on with its value, never without it
      [ -n "$service" ] && __carectl_service+=("$service" "$word")
      continue
    fi
    case $word in
      ${SERVICE_OPTIONS.withValue.map((name) => `${name}=*`).join('|')}|${SERVICE_OPTIONS.flags.join('|')}) __carectl_service+=("$word") ;;
      ${SERVICE_OPTIONS.withValue.join('|')}) skip=1 service=$word ;;
      --*=*) ;;
      -?*) __carectl_find_value "$__carectl_at" "$word" && skip=1 service='' ;;
      *)
        (( \${#__carectl_args[@]} == 0 )) && word=$(__carectl_canonical "$__carectl_at" "$word")
        if (( \${#__carectl_args[@]} == 0 )) && __carectl_has_command "$__carectl_at" "$word"; then
          __carectl_at=\${__carectl_at:+$__carectl_at }$word
        else
          __carectl_args+=("$word")
        fi ;;
    esac
  done
}

# The command that the words name.
__carectl_path() {
  local __carectl_at
  local -a __carectl_args __carectl_service
  __carectl_walk "$@"
  printf '%s\\n' "$__carectl_at"
}`;

/** The commands that take positional arguments, as one case pattern. */
function commandsWithArguments(commands: readonly CommandDoc[]): string {
  return (
    commands
      .filter((command) => command.arguments.length > 0)
      .map((command) => quote(pathKey(command)))
      .join('|') || "''"
  );
}

/** One case entry per command that has lines: `'path') printf '%s\n' 'line' … ;;`. */
function caseTable(commands: readonly CommandDoc[], linesOf: (command: CommandDoc) => string[]): string {
  return commands
    .map((command) => ({ command, lines: linesOf(command) }))
    .filter(({ lines }) => lines.length > 0)
    .map(({ command, lines }) => `    ${quote(pathKey(command))}) printf '%s\\n' ${lines.map(quote).join(' ')} ;;`)
    .join('\n');
}

/** `'config set|1|output') printf …`; an argument whose words do not depend on the one before matches any. */
function argumentTable(commands: readonly CommandDoc[]): string {
  return commands
    .flatMap((command) =>
      argumentWords(command).map(({ index, previous, words, run, variadic }) => {
        // an argument of any number of words matches any count (its first word is the first argument)
        const at = variadic ? `${pathKey(command)}|` : `${pathKey(command)}|${index}|`;
        const pattern = previous === undefined ? `${quote(at)}*` : quote(`${pathKey(command)}|${index}|${previous}`);
        return `    ${pattern}) printf '%s\\n' ${quote(run ? `<run:${run}>` : words.join(' '))} ;;`;
      }),
    )
    .join('\n');
}

function valueTable(commands: readonly CommandDoc[]): string {
  return commands
    .flatMap((command) =>
      valueOptions(command).map(({ names, kind }) => {
        const patterns = names.map((name) => quote(`${pathKey(command)}|${name}`)).join('|');
        return `    ${patterns}) __carectl_value=${quote(valueWord(kind))} ;;`;
      }),
    )
    .join('\n');
}

/** The option's value as __carectl_value holds it (see the top of the file). */
function valueWord(kind: ValueKind): string {
  if (kind.kind === 'words') return `${kind.list ? ',' : ''}${kind.words.join(' ')}`;
  if (kind.kind === 'run') return `${kind.list ? ',' : ''}<run:${kind.what}>`;
  return kind.kind === 'path' ? '<path>' : '';
}

/** A word in single quotes for sh. */
function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
