"""What `diagnose` says on stderr, in the language of the report (`--lang`, else LC_ALL / LANG).

Reasons an input was skipped come from the reader in English; the fixed ones are said in Chinese
too, and a reason that quotes the system (`cannot open: Permission denied`) keeps its quote.
"""

from __future__ import annotations

from ascend_doctor.read.sources import EMPTY_STDIN

MESSAGES = {
    "en": {
        "error": "ascend-doctor: error: {message}",
        "interrupted": "\nascend-doctor: interrupted",
        "cannot_write_output": "cannot write the output: {reason}",
        "internal": (
            "ascend-doctor: internal error: {error} "
            "(run again with --debug for the traceback, and please report it)"
        ),
        "skipped": "ascend-doctor: skipped {path}: {reason}",
        "more_skipped": "ascend-doctor: ... and {count} more skipped (see --format json for the full list)",
        "note": "ascend-doctor: note: {path}: {note}",
        "warning": "ascend-doctor: warning: {warning}",
        "terminal": "ascend-doctor: reading the log from the terminal: paste it, then press Ctrl-D",
        "scanning": "ascend-doctor: scanning {places}",
        "fast_engine": (
            "ascend-doctor: note: {megabytes:,.0f} MB were read without hyperscan, at about 20 MB/s "
            "per core, where hyperscan reads about ten times faster with the same findings: {reason}"
        ),
        "no_summary": "ascend-doctor: warning: cannot write the job summary {path}: {reason}",
        "mistyped": "'{word}' is not a file or a command; did you mean 'ascend-doctor {command}'?",
        "no_file_in_dirs": "nothing to read: no file was found in the directories given",
        "no_log": (
            "no log given, and nothing came in on standard input: pass a log file or directory, "
            "or '-' with a pipe"
        ),
        "cannot_read": "cannot read {path}: {reason}",
        "all_skipped": "nothing to read: all {count} input(s) were skipped",
        "output_is_dir": "cannot write {path}: it is a directory",
        "output_is_log": "the output {path} is one of the logs to diagnose: choose another --output",
        "no_places": (
            "no log given and no CANN log directory found "
            "($ASCEND_PROCESS_LOG_PATH, ~/ascend/log, /root/ascend/log, /var/log/npu/slog); "
            "pass a file, a directory or '-' for stdin"
        ),
        "cannot_write": "cannot write {path}: {reason}",
        "stdout_closed": "cannot write the report: {stream} is closed (use -o FILE)",
        "stdout_failed": "cannot write the report to {stream}: {reason}",
    },
    "zh": {
        "error": "ascend-doctor：错误：{message}",
        "interrupted": "\nascend-doctor：已中断",
        "cannot_write_output": "无法写出结果：{reason}",
        "internal": "ascend-doctor：内部错误：{error}（加 --debug 重新运行可查看调用栈，请报告此问题）",
        "skipped": "ascend-doctor：已跳过 {path}：{reason}",
        "more_skipped": "ascend-doctor：……另有 {count} 个被跳过（完整列表见 --format json）",
        "note": "ascend-doctor：注意：{path}：{note}",
        "warning": "ascend-doctor：警告：{warning}",
        "terminal": "ascend-doctor：正在从终端读取日志：粘贴后按 Ctrl-D",
        "scanning": "ascend-doctor：正在扫描 {places}",
        "fast_engine": (
            "ascend-doctor：注意：在没有 hyperscan 的情况下读取了 {megabytes:,.0f} MB，每核约 20 MB/s，"
            "而 hyperscan 约快十倍，结论相同：{reason}"
        ),
        "no_summary": "ascend-doctor：警告：无法写入作业摘要 {path}：{reason}",
        "mistyped": "'{word}' 既不是文件也不是命令；是否想用 'ascend-doctor {command}'？",
        "no_file_in_dirs": "没有可读的内容：给出的目录中没有文件",
        "no_log": "没有给出日志，标准输入也没有内容：请给出日志文件或目录，或通过管道配合 '-' 使用",
        "cannot_read": "无法读取 {path}：{reason}",
        "all_skipped": "没有可读的内容：全部 {count} 个输入都被跳过",
        "output_is_dir": "无法写入 {path}：它是一个目录",
        "output_is_log": "输出文件 {path} 是要诊断的日志之一：请换一个 --output",
        "no_places": (
            "没有给出日志，也没有找到 CANN 日志目录"
            "（$ASCEND_PROCESS_LOG_PATH、~/ascend/log、/root/ascend/log、/var/log/npu/slog）；"
            "请给出文件、目录，或用 '-' 表示标准输入"
        ),
        "cannot_write": "无法写入 {path}：{reason}",
        "stdout_closed": "无法写出报告：{stream}已关闭（请使用 -o FILE）",
        "stdout_failed": "无法把报告写到{stream}：{reason}",
    },
}

# The reader's fixed reasons and notes, and the words that open its reasons with a system message.
_CHINESE = {
    "no such file or directory": "文件或目录不存在",
    "broken symbolic link": "符号链接已失效",
    "permission denied": "没有权限",
    "empty file": "空文件",
    "symbolic link to a directory (not followed)": "指向目录的符号链接（未跟随）",
    "not a regular file (FIFO, device or socket)": "不是普通文件（FIFO、设备或套接字）",
    "binary file (contains NUL bytes)": "二进制文件（含 NUL 字节）",
    "an ascend-doctor report, not a log": "ascend-doctor 生成的报告，不是日志",
    "a zip archive: extract it and diagnose the directory": "zip 压缩包：请解压后诊断解压出的目录",
    "a tar archive: extract it and diagnose the directory": "tar 压缩包：请解压后诊断解压出的目录",
    "standard input is closed": "标准输入已关闭",
    "standard input named twice: read once": "标准输入指定了两次：只读取一次",
    EMPTY_STDIN: "空输入：标准输入没有内容",
    "starts with NUL bytes (a log truncated in place, as by logrotate's copytruncate)": (
        "以 NUL 字节开头（日志被原地截断过，例如 logrotate 的 copytruncate）"
    ),
    "cannot stat": "无法获取文件信息",
    "cannot open": "无法打开",
    "cannot read": "无法读取",
    "cannot list the directory": "无法列出目录",
}
_SAME_FILE = "the same file as "


def say_in(lang: str, key: str, **values: object) -> str:
    """A stderr message in `lang` (English when there is no such language)."""
    return MESSAGES.get(lang, MESSAGES["en"])[key].format(**values)


def reason_in(lang: str, reason: str) -> str:
    """A reason an input was skipped, or a note on it, in `lang` where it is one the reader says."""
    if lang != "zh":
        return reason
    if reason in _CHINESE:
        return _CHINESE[reason]
    if reason.startswith(_SAME_FILE):
        return f"与 {reason[len(_SAME_FILE) :]} 是同一个文件"
    head, colon, system = reason.partition(": ")
    return f"{_CHINESE[head]}：{system}" if colon and head in _CHINESE else reason
