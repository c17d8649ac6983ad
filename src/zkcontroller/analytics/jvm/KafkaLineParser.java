package zkcontroller.jvm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The algorithm of {@code KafkaLogParser.parse_lines} plus {@code extract._kafka_rows}, for one uncompressed
 * chunk of a Kafka-format log: same rows, same columns, same line numbers, same folding of stack traces.
 *
 * <p>Nothing here knows a Kafka message: every regex, template, column name and rejection reason comes from
 * Python as JSON ({@code jvm_parser.config_json}), with Python's Unicode classes already spelled out for
 * {@code java.util.regex}. One instance per task: it holds reusable {@link Matcher}s.
 */
public final class KafkaLineParser {
    private static final Object[] NONE = new Object[0];

    private static final class Template {
        String kind;
        String[] starts;
        String needle;
        Matcher pattern, patternPlain;
        boolean anchored;
        /** jvm_parser.split_at_dot_star: HEAD's literals, TAIL (plain form, transparent bounds), its literal. */
        String[] splitHeads;
        Matcher splitTail;
        String splitLiteral;
        boolean splitLazy;
        /** jvm_parser.HAND_TEMPLATES: the shape {@link #handMatch} decides on plain bodies (0: none). */
        int hand;
        boolean[] extraAnchored;
        int[] groupField;  // field index per group entry
        int[] groupIndex;
        int[] extraField;
        Matcher[] extra, extraPlain;
        String[][] extraPrefixes;
        String[][] extraLiterals;  // jvm_parser.literals_then_group (null: none), with extraShape
        int[] extraShape;
        int[] constField;
        Object[] constValue;
        /** kafka_log_parser.Template.loose / loose_extra (null: the template or extra has no numeric field). */
        Matcher loose;
        Matcher[] looseExtra;
    }

    private final Matcher prefix, layoutHead, layoutTail, continuation, pyTraceback, javaException, timestamp, ident,
            identController, identEpoch, identBroker, identPartition, oldPrefix, tpSplit, intList;
    /** The same regexes for plain lines ({@link #plain}); the full ones where the fast path is off. */
    private final Matcher prefixP, layoutHeadP, layoutTailP, continuationP, pyTracebackP, javaExceptionP, timestampP,
            identPartitionP, oldPrefixP, tpSplitP;
    /**
     * The fast path ({@code fast_path} in the config; off = the regex-only path, kept to prove the two agree).
     * It never decides what a regex would decide differently: hand-written scanning covers only the common shapes
     * exactly (the log4j head, the trailing {@code (logger)}, the log ident, tp splits, int lists) and returns
     * "unsure" otherwise, so the regex runs; cheap necessary conditions (a first character) skip regexes that
     * cannot match; and on plain lines the regexes run in their ASCII-class form.
     */
    private final boolean fast;
    /**
     * The line being parsed is plain: every character ASCII and none of U+001C-U+001F. On such text Python's
     * {@code \d}, {@code \w} and {@code \s} accept exactly what Java's ASCII classes accept (Python's {@code \s}
     * alone adds U+001C-U+001F among ASCII), so the {@code regex_plain} variants match exactly as the full ones.
     * Every string the parse derives from a line is a substring of it, so plain too. Always false when not fast.
     */
    private boolean plain;
    private final String sep, stateChangeLogger, spaces, ok, rejected, sourceFormat;
    private final String reasonNoTimestamp, reasonNoLayout, reasonBadTimestamp, reasonControlChar, reasonNotUtf8,
            reasonBadInt, reasonBadList, reasonIdentNotNumber;
    /** kafka_log_parser.IDENT_LOOSE / IDENT_KEYS, in their order; identLooseField: the field each names. */
    private final Matcher[] identLoose;
    private final String[][] identKeys;
    private final int[] identLooseField;
    /** kafka_log_parser.FIELD_INT / FIELD_LIST: what a numeric or broker-list field's text must be. */
    private final Matcher fieldInt, fieldList;
    private final int maxExceptionChars, maxRejectedChars, nCols, nFields;
    private final int cStatus, cReason, cLine, cTsMs, cCluster, cSource, cLineNo, cFormat, cLevel, cLogger, cKind,
            cException;
    private final int[] fieldCol;
    private final String[] fieldNames;
    private final boolean[] intField, listField, lowerField;
    private final int fTp, fTopic, fPartition, fTopics, fControllerId, fControllerEpoch, fBrokerId;
    private final String[] identPartitionStarts, oldPrefixStarts;
    private final Template[] unguarded;
    private final Map<Character, Template[]> byFirst = new HashMap<>();

    public KafkaLineParser(String configJson) throws IOException {
        JsonNode c = new ObjectMapper().readTree(configJson);
        JsonNode rx = c.get("regex");
        prefix = compile(rx, "prefix");
        layoutHead = compile(rx, "layout_head");
        layoutTail = compile(rx, "layout_tail");
        continuation = compile(rx, "continuation");
        pyTraceback = compile(rx, "py_traceback");
        javaException = compile(rx, "java_exception");
        timestamp = compile(rx, "timestamp");
        ident = compile(rx, "ident");
        identController = compile(rx, "ident_controller");
        identEpoch = compile(rx, "ident_epoch");
        identBroker = compile(rx, "ident_broker");
        identPartition = compile(rx, "ident_partition");
        oldPrefix = compile(rx, "old_prefix");
        tpSplit = compile(rx, "tp_split");
        intList = compile(rx, "int_list");
        fast = c.path("fast_path").asBoolean(false);
        JsonNode rp = fast ? c.get("regex_plain") : rx;
        prefixP = compile(rp, "prefix");
        layoutHeadP = compile(rp, "layout_head");
        layoutTailP = compile(rp, "layout_tail");
        continuationP = compile(rp, "continuation");
        pyTracebackP = compile(rp, "py_traceback");
        javaExceptionP = compile(rp, "java_exception");
        timestampP = compile(rp, "timestamp");
        identPartitionP = compile(rp, "ident_partition");
        oldPrefixP = compile(rp, "old_prefix");
        tpSplitP = compile(rp, "tp_split");
        identPartitionStarts = strings(c.get("ident_partition_starts")).toArray(new String[0]);
        oldPrefixStarts = strings(c.get("old_prefix_starts")).toArray(new String[0]);
        sep = c.get("sep").asText();
        stateChangeLogger = c.get("state_change_logger").asText();
        spaces = c.get("python_spaces").asText();
        ok = c.get("ok").asText();
        rejected = c.get("rejected").asText();
        sourceFormat = c.get("source_format").asText();
        JsonNode reasons = c.get("reasons");
        reasonNoTimestamp = reasons.get("no_timestamp").asText();
        reasonNoLayout = reasons.get("no_layout").asText();
        reasonBadTimestamp = reasons.get("bad_timestamp").asText();
        reasonControlChar = reasons.get("control_char").asText();
        reasonNotUtf8 = reasons.get("not_utf8").asText();
        reasonBadInt = reasons.get("bad_int").asText();
        reasonBadList = reasons.get("bad_list").asText();
        reasonIdentNotNumber = reasons.get("ident_not_number").asText();
        JsonNode identTwins = c.get("ident_loose");
        identLoose = new Matcher[identTwins.size()];
        identKeys = new String[identTwins.size()][];
        identLooseField = new int[identTwins.size()];
        for (int i = 0; i < identTwins.size(); i++) {
            JsonNode twin = identTwins.get(i);
            identLoose[i] = Pattern.compile(twin.get("pattern").asText(), Pattern.UNIX_LINES).matcher("");
            identKeys[i] = strings(twin.get("keys")).toArray(new String[0]);
        }
        fieldInt = Pattern.compile(c.get("field_int").asText(), Pattern.UNIX_LINES).matcher("");
        fieldList = Pattern.compile(c.get("field_list").asText(), Pattern.UNIX_LINES).matcher("");
        maxExceptionChars = c.get("max_exception_chars").asInt();
        maxRejectedChars = c.get("max_rejected_chars").asInt();

        List<String> columns = strings(c.get("columns"));
        nCols = columns.size();
        cStatus = columns.indexOf("status");
        cReason = columns.indexOf("reason");
        cLine = columns.indexOf("line");
        cTsMs = columns.indexOf("ts_ms");
        cCluster = columns.indexOf("cluster");
        cSource = columns.indexOf("source_file");
        cLineNo = columns.indexOf("line_number");
        cFormat = columns.indexOf("source_format");
        cLevel = columns.indexOf("level");
        cLogger = columns.indexOf("logger");
        cKind = columns.indexOf("kind");
        cException = columns.indexOf("exception");

        List<String> fields = strings(c.get("fields"));  // PARSED_FIELDS, then "tp" (not a column)
        nFields = fields.size();
        fieldCol = new int[nFields];
        fieldNames = fields.toArray(new String[0]);
        intField = new boolean[nFields];
        listField = new boolean[nFields];
        lowerField = new boolean[nFields];
        for (int i = 0; i < nFields; i++) {
            fieldCol[i] = columns.indexOf(fields.get(i));
        }
        for (String f : strings(c.get("int_fields"))) intField[fields.indexOf(f)] = true;
        for (String f : strings(c.get("list_fields"))) listField[fields.indexOf(f)] = true;
        for (String f : strings(c.get("lower_fields"))) lowerField[fields.indexOf(f)] = true;
        fTp = fields.indexOf("tp");
        fTopic = fields.indexOf("topic");
        fPartition = fields.indexOf("partition");
        fTopics = fields.indexOf("topics");
        fControllerId = fields.indexOf("controller_id");
        fControllerEpoch = fields.indexOf("controller_epoch");
        fBrokerId = fields.indexOf("broker_id");
        for (int i = 0; i < identLooseField.length; i++) {
            identLooseField[i] = fields.indexOf(identTwins.get(i).get("field").asText());
        }

        List<Template> all = new ArrayList<>();
        for (JsonNode t : c.get("templates")) {
            Template tpl = new Template();
            tpl.kind = t.get("kind").asText();
            tpl.starts = strings(t.get("starts")).toArray(new String[0]);
            tpl.needle = t.get("needle").asText();
            tpl.pattern = Pattern.compile(t.get("pattern").asText(), Pattern.UNIX_LINES).matcher("");
            tpl.patternPlain = Pattern.compile(t.get(fast ? "plain" : "pattern").asText(), Pattern.UNIX_LINES)
                    .matcher("");
            tpl.anchored = t.get("anchored").asBoolean();
            JsonNode split = t.path("split");
            if (fast && split.isObject()) {
                tpl.splitHeads = strings(split.get("heads")).toArray(new String[0]);
                tpl.splitTail = Pattern.compile(split.get("tail").asText(), Pattern.UNIX_LINES).matcher("")
                        .useTransparentBounds(true).useAnchoringBounds(false);
                tpl.splitLiteral = split.get("literal").asText();
                tpl.splitLazy = split.get("lazy").asBoolean();
            }
            tpl.hand = fast ? t.path("hand").asInt(0) : 0;
            JsonNode groups = t.get("groups");
            tpl.groupField = new int[groups.size()];
            tpl.groupIndex = new int[groups.size()];
            int i = 0;
            for (Map.Entry<String, JsonNode> e : groups.properties()) {
                tpl.groupField[i] = field(fields, e.getKey());
                tpl.groupIndex[i] = e.getValue().asInt();
                i++;
            }
            JsonNode extra = t.get("extra");
            tpl.extraField = new int[extra.size()];
            tpl.extra = new Matcher[extra.size()];
            tpl.extraPlain = new Matcher[extra.size()];
            tpl.extraLiterals = new String[extra.size()][];
            tpl.extraShape = new int[extra.size()];
            tpl.extraPrefixes = new String[extra.size()][];
            tpl.extraAnchored = new boolean[extra.size()];
            i = 0;
            for (Map.Entry<String, JsonNode> e : extra.properties()) {
                tpl.extraField[i] = field(fields, e.getKey());
                tpl.extra[i] = Pattern.compile(e.getValue().get("pattern").asText(), Pattern.UNIX_LINES).matcher("");
                tpl.extraPlain[i] = Pattern.compile(e.getValue().get(fast ? "plain" : "pattern").asText(),
                        Pattern.UNIX_LINES).matcher("");
                tpl.extraPrefixes[i] = strings(e.getValue().get("prefixes")).toArray(new String[0]);
                JsonNode alternatives = e.getValue().path("alternatives");
                if (fast && alternatives.isObject()) {
                    tpl.extraLiterals[i] = strings(alternatives.get("literals")).toArray(new String[0]);
                    tpl.extraShape[i] = alternatives.get("shape").asInt();
                }
                tpl.extraAnchored[i] = e.getValue().get("anchored").asBoolean();
                i++;
            }
            JsonNode loose = t.path("loose");
            tpl.loose = loose.isTextual() ? Pattern.compile(loose.asText(), Pattern.UNIX_LINES).matcher("") : null;
            tpl.looseExtra = new Matcher[extra.size()];
            JsonNode looseExtra = t.get("loose_extra");
            i = 0;
            for (Map.Entry<String, JsonNode> e : extra.properties()) {
                JsonNode lx = looseExtra.path(e.getKey());
                tpl.looseExtra[i++] = lx.isTextual() ? Pattern.compile(lx.asText(), Pattern.UNIX_LINES).matcher("")
                        : null;
            }
            JsonNode consts = t.get("consts");
            tpl.constField = new int[consts.size()];
            tpl.constValue = new Object[consts.size()];
            i = 0;
            for (Map.Entry<String, JsonNode> e : consts.properties()) {
                tpl.constField[i] = field(fields, e.getKey());
                JsonNode v = e.getValue();
                tpl.constValue[i] = v.isNull() ? null : v.isBoolean() ? (Object) v.asBoolean()
                        : v.isIntegralNumber() ? (Object) v.asLong() : v.asText();
                i++;
            }
            all.add(tpl);
        }
        List<Template> free = new ArrayList<>();
        for (Template t : all) if (t.starts.length == 0) free.add(t);
        unguarded = free.toArray(new Template[0]);
        for (Template t : all) {
            for (String s : t.starts) {
                char first = s.charAt(0);
                if (byFirst.containsKey(first)) continue;
                List<Template> hit = new ArrayList<>();
                for (Template u : all) {
                    if (u.starts.length == 0) { hit.add(u); continue; }
                    for (String p : u.starts) if (p.charAt(0) == first) { hit.add(u); break; }
                }
                byFirst.put(first, hit.toArray(new Template[0]));
            }
        }
    }

    private static int field(List<String> fields, String name) {
        int i = fields.indexOf(name);
        if (i < 0) throw new IllegalArgumentException("unknown field " + name);
        return i;
    }

    private static Matcher compile(JsonNode rx, String name) {
        return Pattern.compile(rx.get(name).asText(), Pattern.UNIX_LINES).matcher("");
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        for (JsonNode n : array) out.add(n.asText());
        return out;
    }

    // ---- lines of a chunk -------------------------------------------------------------------------------

    /** Rows of one chunk, produced lazily (a 64 MiB chunk never holds all its rows at once). */
    public Iterator<Object[]> rows(byte[] data, String cluster, String name, long firstLine) {
        return new ChunkRows(data, cluster, name, firstLine);
    }

    private final class ChunkRows implements Iterator<Object[]> {
        final byte[] data;
        final String cluster, name;
        int pos = 0;
        long number;
        Object[] held = null;
        boolean inTraceback = false, done = false;
        final ArrayDeque<Object[]> ready = new ArrayDeque<>();
        final List<Object[]> bad = new ArrayList<>();

        ChunkRows(byte[] data, String cluster, String name, long firstLine) {
            this.data = data;
            this.cluster = cluster;
            this.name = name;
            this.number = firstLine - 1;
        }

        @Override
        public boolean hasNext() {
            while (ready.isEmpty() && !done) step();
            return !ready.isEmpty();
        }

        @Override
        public Object[] next() {
            if (!hasNext()) throw new NoSuchElementException();
            return ready.poll();
        }

        /** One line, as bytes.splitlines() cuts them (\n, \r\n or \r), through parse_lines' state machine. */
        private void step() {
            if (pos >= data.length) {
                if (held != null) ready.add(held);
                held = null;
                ready.addAll(bad);  // not-UTF-8 lines after the records, as _bad_rows yields them
                done = true;
                return;
            }
            int start = pos, end = pos;
            if (fast) {
                boolean odd = false;  // a byte that keeps the line from being plain
                for (; end < data.length; end++) {
                    byte b = data[end];
                    if (b < 0x20) {  // signed: also every byte of a non-ASCII character; one test for the rest
                        if (b == '\n' || b == '\r') break;
                        odd |= b < 0 || b >= 0x1c;
                    }
                }
                plain = !odd;
            } else {
                while (end < data.length && data[end] != '\n' && data[end] != '\r') end++;
            }
            pos = end;
            if (pos < data.length) {
                pos += (data[pos] == '\r' && pos + 1 < data.length && data[pos + 1] == '\n') ? 2 : 1;
            }
            number++;
            String text = plain ? new String(data, start, end - start, StandardCharsets.ISO_8859_1)
                    : decode(data, start, end);
            if (text == null) {
                bad.add(rejectedRow(cluster, name, number, reasonNotUtf8, escaped(data, start, end)));
                text = "";
            }
            line(rstripNewlines(text));
        }

        private void line(String text) {
            if ((!fast || mayStartTraceback(text)) && (plain ? pyTracebackP : pyTraceback).reset(text).lookingAt()) {
                inTraceback = true;
                return;
            }
            if (inTraceback && !text.isEmpty()
                    && !(plain ? timestampP : timestamp).reset(stripPrefix(text)).lookingAt()) {
                if (held != null && text.charAt(0) != ' ' && text.charAt(0) != '\t') {
                    held[cException] = truncate(text, maxExceptionChars);
                }
                return;
            }
            inTraceback = false;
            if (held != null && held[cException] == null && (!fast || mayStartJavaName(text))
                    && (plain ? javaExceptionP : javaException).reset(text).lookingAt()) {
                held[cException] = truncate(text, maxExceptionChars);
            }
            Object[] result = parseLine(text);
            if (result == null) return;
            if (held != null) {
                ready.add(held);
                held = null;
            }
            if (result[cStatus] == ok) {
                held = result;
            } else {
                ready.add(result);
            }
        }

        private Object[] parseLine(String text) {
            if (isBlank(text) || ((!fast || mayContinue(text))
                    && (plain ? continuationP : continuation).reset(text).lookingAt())) {
                return null;
            }
            String stripped = text.startsWith("[") ? text : stripPrefix(text);
            int messageEnd = stripped.contains(sep) ? -1 : plain ? plainLayout(stripped) : UNSURE;
            if (messageEnd == UNSURE) messageEnd = layout(stripped);
            if (messageEnd < 0) {
                return rejectedRow(cluster, name, number, rejectReason(stripped), text);
            }
            if (lineTs == Long.MIN_VALUE) return rejectedRow(cluster, name, number, reasonBadTimestamp, text);
            Object[] row = newRow(cluster, name, ok, number);
            row[cTsMs] = lineTs;
            row[cLevel] = lineLevel;
            row[cLogger] = lineLogger;
            String bad = parseMessage(lineLogger, stripped.substring(lineHeadEnd, messageEnd), row);
            return bad == null ? row : rejectedRow(cluster, name, number, bad, text);
        }
    }

    /** No match possible for PY_TRACEBACK: it starts with one of {@code [ |+]}, "E", "T" or "D". */
    private static boolean mayStartTraceback(String text) {
        return !text.isEmpty() && " |+ETD".indexOf(text.charAt(0)) >= 0;
    }

    /** No match possible for JAVA_EXCEPTION: it starts with {@code [a-zA-Z_$]}. */
    private static boolean mayStartJavaName(String text) {
        if (text.isEmpty()) return false;
        char ch = text.charAt(0);
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == '$';
    }

    /**
     * No match possible for CONTINUATION: each alternative starts with {@code \s}, ".", "C", "S", "(" or
     * {@code [a-zA-Z_$]}, so never with "[" or an ASCII digit (how every record of the default layout starts).
     */
    private static boolean mayContinue(String text) {
        if (text.isEmpty()) return true;
        char ch = text.charAt(0);
        return ch != '[' && (ch < '0' || ch > '9');
    }

    /** The columns every row carries: where the line came from and whether it parsed. */
    private Object[] newRow(String cluster, String name, String status, long number) {
        Object[] row = new Object[nCols];
        row[cCluster] = cluster;
        row[cSource] = name;
        row[cFormat] = sourceFormat;
        row[cStatus] = status;
        row[cLineNo] = number;
        return row;
    }

    private Object[] rejectedRow(String cluster, String name, long number, String reason, String line) {
        Object[] row = newRow(cluster, name, rejected, number);
        row[cReason] = reason;
        row[cLine] = truncate(line, maxRejectedChars);
        return row;
    }

    static final int UNSURE = -2;
    /** What the layout gave the line being parsed (set where layout or plainLayout returns a message end). */
    private int lineHeadEnd;
    private String lineLevel, lineLogger;
    private long lineTs;

    /**
     * LAYOUT = head + {@code (.*?)} + tail, the tail starting with {@code \s*\(}: the message ends at the first
     * place the tail matches to the end of the line. Such a place is a "(" or the start of the whitespace run
     * before one (from there {@code \s*} takes the whole run), so only those are tried, in order. Returns the
     * message's end (and sets the line* fields), or -1 where the full LAYOUT regex would not match.
     */
    private int layout(String text) {
        Matcher head = plain ? layoutHeadP : layoutHead, tail = plain ? layoutTailP : layoutTail;
        if (!head.reset(text).lookingAt()) return -1;
        int start = head.end();
        for (int open = text.indexOf('(', start); open >= 0; open = text.indexOf('(', open + 1)) {
            int k = open;
            while (k > start && spaces.indexOf(text.charAt(k - 1)) >= 0) k--;
            if (tail.reset(text).region(k, text.length()).lookingAt()) {
                lineHeadEnd = start;
                lineLevel = head.group(5);
                lineLogger = tail.group(1);
                lineTs = tsToMs(head.group(1), head.group(2), head.group(3), head.group(4));
                return k;
            }
        }
        return -1;
    }

    private static final String[] LEVELS = {"TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL"};
    private int lastYear = -1, lastMonth, lastDay;
    private long lastEpochDay;

    /**
     * {@link #layout} by index arithmetic for the default log4j layout on a plain line:
     * {@code [yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)} (a "T" for the space, a "." for the comma, runs of
     * spaces between the parts). On such a line every regex choice in LAYOUT_HEAD is its first one (the optional
     * parts present or absent at once), so the head's match is this one. The line ends with ")": a tail matching
     * to the end from an earlier "(" would have to hold this last "(" inside the logger name, so only the last
     * "(" can start the tail, and it does iff the name is {@code [A-Za-z_$][\w.$-]*}. Anything else (a zone,
     * more millisecond digits, {@code :line}, a thread after the logger, a name with other characters...):
     * UNSURE, and the regexes decide. {@code jvm_parser.HAND_WRITTEN} pins the patterns this implements.
     */
    private int plainLayout(String s) {
        int n = s.length();
        if (n < 29 || s.charAt(0) != '[' || s.charAt(n - 1) != ')') return UNSURE;
        char sep1 = s.charAt(11), dot = s.charAt(20);
        if (s.charAt(5) != '-' || s.charAt(8) != '-' || (sep1 != ' ' && sep1 != 'T') || s.charAt(14) != ':'
                || s.charAt(17) != ':' || (dot != ',' && dot != '.') || s.charAt(24) != ']') {
            return UNSURE;
        }
        int year = ascii(s, 1, 4), month = ascii(s, 6, 2), day = ascii(s, 9, 2), hour = ascii(s, 12, 2),
                minute = ascii(s, 15, 2), second = ascii(s, 18, 2), millis = ascii(s, 21, 3);
        if ((year | month | day | hour | minute | second | millis) < 0) return UNSURE;
        int p = 25;
        while (p < n && plainSpace(s.charAt(p))) p++;
        if (p == 25) return UNSURE;
        int q = p;
        while (q < n && !plainSpace(s.charAt(q))) q++;
        if (q == n) return UNSURE;
        String level = null;
        for (String l : LEVELS) {
            if (l.length() == q - p && s.startsWith(l, p)) {
                level = l;
                break;
            }
        }
        if (level == null) return UNSURE;
        int headEnd = q;
        while (headEnd < n && plainSpace(s.charAt(headEnd))) headEnd++;
        int open = s.lastIndexOf('(');
        if (open < headEnd || open + 2 > n - 1) return UNSURE;
        char first = s.charAt(open + 1);
        if (!(asciiLetter(first) || first == '_' || first == '$')) return UNSURE;
        for (int i = open + 2; i < n - 1; i++) {
            char ch = s.charAt(i);
            if (!(asciiLetter(ch) || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '$' || ch == '-')) {
                return UNSURE;
            }
        }
        int k = open;
        while (k > headEnd && plainSpace(s.charAt(k - 1))) k--;
        lineHeadEnd = headEnd;
        lineLevel = level;
        lineLogger = s.substring(open + 1, n - 1);
        lineTs = plainTsToMs(year, month, day, hour, minute, second, millis);
        return k;
    }

    /** {@link #tsToMs} of ASCII fields without a zone: the same checks and arithmetic; the day's number cached. */
    private long plainTsToMs(int year, int month, int day, int hour, int minute, int second, int millis) {
        if (year != lastYear || month != lastMonth || day != lastDay) {
            if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return Long.MIN_VALUE;
            lastEpochDay = java.time.LocalDate.of(year, month, day).toEpochDay();
            lastYear = year;
            lastMonth = month;
            lastDay = day;
        }
        if (hour > 23 || minute > 59 || second > 59) return Long.MIN_VALUE;
        return ((lastEpochDay * 24 + hour) * 60 + minute) * 60_000L + second * 1000L + millis;
    }

    private static boolean asciiLetter(char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    }

    /** Python's {@code \s} on a plain line: tab, line feed, vertical tab, form feed, carriage return, space. */
    private static boolean plainSpace(char ch) {
        return ch == ' ' || (ch >= '\t' && ch <= '\r');
    }

    private String stripPrefix(String text) {
        Matcher m = plain ? prefixP : prefix;
        return m.reset(text).lookingAt() ? text.substring(m.end()) : text;
    }

    private String rejectReason(String text) {
        if (text.contains(sep)) return reasonControlChar;
        if (!(plain ? timestampP : timestamp).reset(text).lookingAt()) return reasonNoTimestamp;
        return reasonNoLayout;
    }

    /** Python's {@code not text.strip()}: empty or only characters str.isspace() accepts. */
    private boolean isBlank(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (spaces.indexOf(text.charAt(i)) < 0) return false;
        }
        return true;
    }

    // ---- one message ------------------------------------------------------------------------------------

    /** Fills row; returns the rejection reason of a numeric or broker-list field that does not fit, else null. */
    private String parseMessage(String logger, String message, Object[] row) {
        Object[] values = new Object[nFields];
        String body = message;
        String identBad = null;
        lineWarning = null;
        if (plain) {
            int close = body.startsWith("[") ? body.indexOf(']') : -1;
            if (close > 0) {  // IDENT, by hand (below)
                String text = body.substring(1, close);
                int end = close + 1;
                if (end < body.length() && (body.charAt(end) == ':' || body.charAt(end) == ',')) end++;
                if (end < body.length() && body.charAt(end) == ' ') end++;
                values[fControllerId] = plainController(text);
                values[fControllerEpoch] = plainEpoch(text);
                values[fBrokerId] = plainBroker(text);
                boolean broker = values[fBrokerId] != null;
                identBad = digitThenWord(text) ? identReadInPart(text) : null;
                boolean partition = false;
                if (mayStart(text, identPartitionStarts) && identPartitionP.reset(text).lookingAt()) {
                    values[fTp] = identPartitionP.group(1);
                    values[fBrokerId] = identPartitionP.group(2);
                    partition = true;
                }
                lineWarning = identWarning(text, values[fControllerId] != null, values[fControllerEpoch] != null,
                        broker, partition);
                body = body.substring(end);
            }
        } else if (ident.reset(body).lookingAt()) {
            String text = ident.group(1);
            int end = ident.end();
            values[fControllerId] = identController.reset(text).find() ? identController.group(1) : null;
            values[fControllerEpoch] = identEpoch.reset(text).find() ? identEpoch.group(1) : null;
            values[fBrokerId] = identBroker.reset(text).find() ? identBroker.group(1) : null;
            boolean broker = values[fBrokerId] != null;
            identBad = identReadInPart(text);
            boolean partition = false;
            if (identPartition.reset(text).lookingAt()) {
                values[fTp] = identPartition.group(1);
                values[fBrokerId] = identPartition.group(2);
                partition = true;
            }
            lineWarning = identWarning(text, values[fControllerId] != null, values[fControllerEpoch] != null, broker,
                    partition);
            body = body.substring(end);
        }
        Matcher old = plain ? oldPrefixP : oldPrefix;
        if (logger.equals(stateChangeLogger) && (!fast || mayStart(body, oldPrefixStarts))
                && old.reset(body).lookingAt()) {
            values[fControllerId] = or(old.group(1), values[fControllerId]);
            values[fControllerEpoch] = or(old.group(2), values[fControllerEpoch]);
            values[fBrokerId] = or(old.group(3), values[fBrokerId]);
            body = body.substring(old.end());
        }
        String kind = "other";
        String bad = null;
        boolean matched = false;
        Template[] candidates = body.isEmpty() ? unguarded : byFirst.getOrDefault(body.charAt(0), unguarded);
        for (Template t : candidates) {
            if (t.starts.length > 0 && !startsWithAny(body, t.starts)) continue;
            if (!body.contains(t.needle)) continue;
            Matcher m = null;
            String[] g = plain && t.hand != 0 ? handMatch(t.hand, body, handEnds) : null;
            if (g != null) {
                // decided by hand: the groups the template's regex would give
            } else if (plain && t.splitTail != null) {
                m = splitMatch(t, body);
                if (m == null) continue;
            } else {
                m = (plain ? t.patternPlain : t.pattern).reset(body);
                if (!(t.anchored ? m.lookingAt() : m.find())) continue;
            }
            kind = t.kind;
            // found = groups, then extras (an extra of the same name replaces the group's value, even by None)
            Object[] found = new Object[nFields];
            boolean[] set = new boolean[nFields];
            boolean[] check = new boolean[nFields];  // kafka_log_parser: a value the text after it may go on from
            for (int i = 0; i < t.groupField.length; i++) {
                int f = t.groupField[i];
                String value = g != null ? g[t.groupIndex[i]] : m.group(t.groupIndex[i]);
                found[f] = value;
                set[f] = true;
                if (truthy(value) && (intField[f] || listField[f])) {
                    check[f] |= readOn(body, g != null ? handEnds[t.groupIndex[i]] : m.end(t.groupIndex[i]),
                            listField[f]);
                }
            }
            for (int i = 0; i < t.extra.length; i++) {
                Matcher e = plain ? t.extraPlain[i] : t.extra[i];
                String value = UNSURE_TEXT;
                int valueEnd = -1;
                if (plain && t.extraLiterals[i] != null && !t.extraAnchored[i] && t.extraPrefixes[i].length > 0) {
                    int first = firstOf(t.extraPrefixes[i], body);
                    value = first < 0 ? null : literalGroup(body, first, t.extraLiterals[i], t.extraShape[i], handEnds);
                    valueEnd = handEnds[0];
                    if (value == UNSURE_TEXT) {
                        value = e.reset(body).find(first) ? e.group(1) : null;
                        valueEnd = value != null ? e.end(1) : -1;
                    }
                }
                if (value == UNSURE_TEXT) {
                    boolean hit = t.extraAnchored[i] ? e.reset(body).lookingAt() : find(e, t.extraPrefixes[i], body);
                    value = hit ? e.group(1) : null;
                    valueEnd = hit ? e.end(1) : -1;
                }
                int f = t.extraField[i];
                found[f] = value;
                set[f] = true;
                if (truthy(value) && (intField[f] || listField[f])) check[f] |= readOn(body, valueEnd, listField[f]);
            }
            boolean[] missing = new boolean[nFields];
            for (int f = 0; f < nFields; f++) missing[f] = check[f] || (set[f] && !truthy(found[f]));
            bad = unfit(t, body, missing, false);
            for (int f = 0; f < nFields; f++) {
                if (set[f] && truthy(found[f])) values[f] = found[f];
            }
            for (int i = 0; i < t.constField.length; i++) values[t.constField[i]] = t.constValue[i];
            matched = true;
            break;
        }
        if (!matched) {
            for (Template t : candidates) {
                if (t.starts.length > 0 && !startsWithAny(body, t.starts)) continue;
                if (!body.contains(t.needle)) continue;
                bad = unfit(t, body, null, true);
                if (bad != null) break;
            }
        }
        row[cKind] = kind;
        String overflow = typed(values, row);
        if (bad == null && identBad == null && overflow == null) row[cReason] = lineWarning;
        return bad != null ? bad : identBad != null ? identBad : overflow;
    }

    /** Group ends of the last handMatch / literalGroup (by group number; literalGroup: index 0). */
    private final int[] handEnds = new int[8];
    /** kafka_log_parser.REASON_IDENT_NOT_NUMBER of the message being parsed, or null. */
    private String lineWarning;

    /** Python's {@code str.isspace}. */
    private boolean isPythonSpace(char ch) {
        return spaces.indexOf(ch) >= 0;
    }

    /** kafka_log_parser._item_char: a character LOOSE_ITEM takes. */
    private boolean itemChar(char ch) {
        return !isPythonSpace(ch) && ",:=()[]{}\"".indexOf(ch) < 0;
    }

    /** kafka_log_parser.read_on: whether a strict value ending at text[end] may go on in what its loose twin reads. */
    private boolean readOn(String text, int end, boolean list) {
        if (end < 0 || end >= text.length()) return false;
        char c = text.charAt(end);
        if (c == '.') return end + 1 < text.length() && itemChar(text.charAt(end + 1));
        if (itemChar(c)) return true;
        if (!(list && c == ',')) return false;
        int start = end + 1 + (text.startsWith(" ", end + 1) ? 1 : 0);
        int stop = start;
        while (stop < text.length() && itemChar(text.charAt(stop))) stop++;
        return stop > start && (stop == text.length() || (text.charAt(stop) != ':' && text.charAt(stop) != '='));
    }

    /** Python's {@code \w} (str.isalnum() or "_") for the code point at text[i]. */
    private static boolean pythonWord(String text, int i) {
        int cp = text.codePointAt(i);
        if (cp == '_') return true;
        switch (Character.getType(cp)) {
            case Character.UPPERCASE_LETTER: case Character.LOWERCASE_LETTER: case Character.TITLECASE_LETTER:
            case Character.MODIFIER_LETTER: case Character.OTHER_LETTER: case Character.DECIMAL_DIGIT_NUMBER:
            case Character.LETTER_NUMBER: case Character.OTHER_NUMBER:
                return true;
            default:
                return false;
        }
    }

    /** On a plain ident: whether an ASCII digit is followed by {@code [A-Za-z_]} (else no id was read in part). */
    private static boolean digitThenWord(String t) {
        for (int i = 0; i + 1 < t.length(); i++) {
            char d = t.charAt(i), w = t.charAt(i + 1);
            if (d >= '0' && d <= '9' && ((w >= 'a' && w <= 'z') || (w >= 'A' && w <= 'Z') || w == '_')) return true;
        }
        return false;
    }

    /** kafka_log_parser.parse_message: the first ident id (controller, epoch, broker) read in part, or null. */
    private String identReadInPart(String text) {
        Matcher[] ms = {identController, identEpoch, identBroker};
        int[] fs = {fControllerId, fControllerEpoch, fBrokerId};
        for (int i = 0; i < ms.length; i++) {
            Matcher m = ms[i].reset(text);
            if (m.find() && m.end(1) < text.length() && pythonWord(text, m.end(1))) return badField(fs[i]);
        }
        return null;
    }

    /** kafka_log_parser.KafkaLogParser._ident_warning: found says which strict ident patterns found their id. */
    private String identWarning(String text, boolean controller, boolean epoch, boolean broker, boolean partition) {
        boolean[] found = {controller, epoch, broker, partition};
        for (int i = 0; i < identLoose.length; i++) {
            if (found[i]) continue;
            boolean key = false;
            for (String k : identKeys[i]) key |= text.contains(k);
            if (key && identLoose[i].reset(text).find()) {
                return reasonIdentNotNumber.replace("{field}", fieldNames[identLooseField[i]]);
            }
        }
        return null;
    }

    /**
     * KafkaLogParser._unfit: the reason a numeric or broker-list field of t that has no strict value ({@code
     * missing}; all its groups when {@code whole}, the template's pattern did not match) does not fit, or null.
     */
    private String unfit(Template t, String body, boolean[] missing, boolean whole) {
        if (t.loose != null) {
            boolean any = whole;
            if (!whole) for (int f : t.groupField) any |= missing[f];
            if (any && t.loose.reset(body).find()) {
                for (int f = 0; f < nFields; f++) {
                    if (!(intField[f] || listField[f]) || !(whole || missing[f])) continue;
                    for (int i = 0; i < t.groupField.length; i++) {
                        if (t.groupField[i] != f) continue;
                        String value = t.loose.group(t.groupIndex[i]);
                        if (value != null && !fieldFits(f, value)) return badField(f);
                    }
                }
            }
        }
        if (whole) return null;
        for (int f = 0; f < nFields; f++) {
            if (!missing[f]) continue;
            for (int i = 0; i < t.extraField.length; i++) {
                if (t.extraField[i] != f || t.looseExtra[i] == null) continue;
                Matcher e = t.looseExtra[i].reset(body);
                if (e.find() && !fieldFits(f, e.group(1))) return badField(f);
            }
        }
        return null;
    }

    /** kafka_log_parser.field_fits. */
    private boolean fieldFits(int f, String value) {
        if (listField[f]) {
            if (!fieldList.reset(value).matches()) return false;
            Matcher m = intList.reset(value);
            while (m.find()) if (toInt(m.group()) == null) return false;
            return true;
        }
        return fieldInt.reset(value).matches() && toInt(value) != null;
    }

    private String badField(int f) {
        return (listField[f] ? reasonBadList : reasonBadInt).replace("{field}", fieldNames[f]);
    }

    /**
     * IDENT_CONTROLLER ({@code (?:[Cc]ontroller(?:Id=| id=| |-)|^Topic Deletion Manager )(\d+)}) found in plain
     * text: group 1 or null. Leftmost match first, and at one place the alternatives in their order (they differ
     * in their first character but " id=" and " ", and " id=" then a digit excludes " " then a digit).
     */
    static String plainController(String t) {
        String d;
        if (t.startsWith("Topic Deletion Manager ") && (d = digitsAt(t, 23)) != null) return d;
        for (int i = t.indexOf("ontroller", 1); i > 0; i = t.indexOf("ontroller", i + 1)) {
            char c = t.charAt(i - 1);
            if (c != 'C' && c != 'c') continue;
            int j = i + 9;
            if (t.startsWith("Id=", j) && (d = digitsAt(t, j + 3)) != null) return d;
            if (t.startsWith(" id=", j) && (d = digitsAt(t, j + 4)) != null) return d;
            if (t.startsWith(" ", j) && (d = digitsAt(t, j + 1)) != null) return d;
            if (t.startsWith("-", j) && (d = digitsAt(t, j + 1)) != null) return d;
        }
        return null;
    }

    private static final String[] BROKER_IDENTS = {
        "Broker id=", "KafkaServer id=", "BrokerServer id=", "Kafka Server "};

    /**
     * IDENT_BROKER ({@code ^(?:Broker id=|KafkaServer id=|BrokerServer id=|Kafka Server )(\d+)}) on plain text:
     * group 1 or null.
     * No literal is a prefix of another, so at most one alternative starts the text, and digits must follow it.
     */
    static String plainBroker(String t) {
        for (String p : BROKER_IDENTS) {
            if (t.startsWith(p)) return digitsAt(t, p.length());
        }
        return null;
    }

    /** IDENT_EPOCH ({@code epoch=(-?\d+)}) found in plain text: group 1 or null. */
    static String plainEpoch(String t) {
        for (int i = t.indexOf("epoch="); i >= 0; i = t.indexOf("epoch=", i + 1)) {
            String d = signedDigitsAt(t, i + 6);
            if (d != null) return d;
        }
        return null;
    }

    /**
     * {@code -?\d+} at t[i] on a plain line (a controller epoch, negative once Kafka's Int wrapped), or null: a "-"
     * with no digit after it is no match (the regex gives the "-" back and {@code \d+} fails at it).
     */
    static String signedDigitsAt(String t, int i) {
        if (i < t.length() && t.charAt(i) == '-') {
            String d = digitsAt(t, i + 1);
            return d == null ? null : "-" + d;
        }
        return digitsAt(t, i);
    }

    /** The run of ASCII digits starting at t[i] ({@code \d+} on a plain line, greedy), or null if none. */
    static String digitsAt(String t, int i) {
        int j = i;
        while (j < t.length() && t.charAt(j) >= '0' && t.charAt(j) <= '9') j++;
        return j > i ? t.substring(i, j) : null;
    }

    /**
     * A split template ({@code ^HEAD.*TAIL}) on a plain body: the tail's matcher, holding the template's groups,
     * or null where the whole pattern would not match. The places {@code .*} would hand to TAIL, in the order it
     * would (greedy: from the end back; lazy: forwards), are where TAIL's literal starts; see
     * jvm_parser.split_at_dot_star.
     */
    private static Matcher splitMatch(Template t, String body) {
        int from = -1;
        for (String h : t.splitHeads) {
            if (body.startsWith(h)) {
                from = h.length();
                break;
            }
        }
        if (from < 0) return null;
        Matcher m = t.splitTail.reset(body);
        int n = body.length();
        String lit = t.splitLiteral;
        if (t.splitLazy) {
            for (int p = body.indexOf(lit, from); p >= 0; p = body.indexOf(lit, p + 1)) {
                if (m.region(p, n).lookingAt()) return m;
            }
        } else {
            for (int p = body.lastIndexOf(lit); p >= from; p = body.lastIndexOf(lit, p - 1)) {
                if (m.region(p, n).lookingAt()) return m;
            }
        }
        return null;
    }

    private static final String UPDATE_METADATA_TAIL = " in response to UpdateMetadata request sent by controller ";

    /**
     * The templates of {@code jvm_parser.HAND_TEMPLATES} on a plain body: the groups their regex would give (index =
     * group number, null where a group does not take part), or null: unsure, the regex decides (a miss included).
     * Why each is the same match: every quantified run below is followed by a character it cannot take (a digit run
     * by " ", a word run by " " or nothing), so greedy backtracking has nothing to give back; TP
     * ({@code (\[[^\],\s]+,\d+\]|[^\s\[\]]+-\d+)}) is followed by " ", so it is the whole run of characters
     * other than whitespace and brackets (a body with "[" there is left to the regex). Shapes 1 and 2 are the
     * state-change templates, 3 {@code Handling LeaderAndIsr}, 4 {@code Cached leader info .*} (.*: {@link #splitMatch}).
     */
    static String[] handMatch(int shape, String s, int[] ends) {
        int n = s.length(), i;
        if (shape == 1 || shape == 2) {
            if (n == 0 || (s.charAt(0) != 'C' && s.charAt(0) != 'c')) return null;
            String broker = null;
            if (shape == 1) {  // ^[Cc]hanged partition TP (?:state )?from (\w+) to (\w+)
                if (!s.startsWith("hanged partition ", 1)) return null;
                i = 18;
            } else {  // ^[Cc]hanged state of replica (\d+) for partition TP from (\w+) to (\w+)
                if (!s.startsWith("hanged state of replica ", 1)) return null;
                int d = i = 25;
                while (i < n && isAsciiDigit(s.charAt(i))) i++;
                if (i == d || !s.startsWith(" for partition ", i)) return null;
                broker = s.substring(d, i);
                ends[1] = i;
                i += 15;
            }
            int tp = i;
            while (i < n && !plainSpace(s.charAt(i)) && s.charAt(i) != '[' && s.charAt(i) != ']') i++;
            int j = i;  // [^\s\[\]]+-\d+: the run ends in digits after a "-" that is not its first character
            while (j > tp && isAsciiDigit(s.charAt(j - 1))) j--;
            if (j == i || j - 1 <= tp || s.charAt(j - 1) != '-' || !s.startsWith(" ", i)) return null;
            String tpText = s.substring(tp, i);
            i++;
            // (?:state )? tried first; without it "from " would have to start where "state " does
            if (shape == 1 && s.startsWith("state ", i)) i += 6;
            if (!s.startsWith("from ", i)) return null;
            int from = i += 5;
            while (i < n && isAsciiWord(s.charAt(i))) i++;
            if (i == from || !s.startsWith(" to ", i)) return null;
            String fromState = s.substring(from, i);
            int to = i += 4;
            while (i < n && isAsciiWord(s.charAt(i))) i++;
            if (i == to) return null;
            String toState = s.substring(to, i);
            return shape == 1 ? new String[] {null, tpText, fromState, toState}
                    : new String[] {null, broker, tpText, fromState, toState};
        }
        if (shape == 3) {
            // ^(?:[Hh]andling|[Cc]ompleted) LeaderAndIsr request correlationId \d+ from controller (\d+)(?: epoch (-?\d+))?
            if (s.startsWith("andling", 1) ? s.charAt(0) != 'H' && s.charAt(0) != 'h'
                    : !s.startsWith("ompleted", 1) || (s.charAt(0) != 'C' && s.charAt(0) != 'c')) return null;
            i = s.charAt(1) == 'a' ? 8 : 9;
            if (!s.startsWith(" LeaderAndIsr request correlationId ", i)) return null;
            int d = i += 36;
            while (i < n && isAsciiDigit(s.charAt(i))) i++;
            if (i == d || !s.startsWith(" from controller ", i)) return null;
            int c = i += 17;
            while (i < n && isAsciiDigit(s.charAt(i))) i++;
            if (i == c) return null;
            String controller = s.substring(c, i);
            ends[1] = i;
            String epoch = null;
            if (s.startsWith(" epoch ", i)) {  // the optional group takes part only with a digit after it
                epoch = signedDigitsAt(s, i + 7);
                ends[2] = epoch == null ? -1 : i + 7 + epoch.length();
            }
            return new String[] {null, controller, epoch};
        }
        if (shape == 4) {
            // ^(?:[Cc]ached leader info .*|Add ...|Deleted ...) in response to UpdateMetadata request sent by
            // controller (\d+) epoch (-?\d+): a body starting "[Cc]ached leader info " can take only the first
            // alternative; its greedy .* hands the tail the places its literal starts, from the end back
            if (!s.startsWith("ached leader info ", 1) || (s.charAt(0) != 'C' && s.charAt(0) != 'c')) return null;
            String lit = UPDATE_METADATA_TAIL;
            for (int p = s.lastIndexOf(lit); p >= 19; p = s.lastIndexOf(lit, p - 1)) {
                int c = i = p + lit.length();
                while (i < n && isAsciiDigit(s.charAt(i))) i++;
                if (i == c || !s.startsWith(" epoch ", i)) continue;
                String epoch = signedDigitsAt(s, i + 7);
                if (epoch != null) {
                    ends[1] = i;
                    ends[2] = i + 7 + epoch.length();
                    return new String[] {null, s.substring(c, i), epoch};
                }
            }
            return null;
        }
        return null;
    }

    /** Python's {@code \w} on a plain line. */
    private static boolean isAsciiWord(char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || isAsciiDigit(ch) || ch == '_';
    }

    private static final String UNSURE_TEXT = new String("unsure");

    /**
     * Group 1 of {@code (?:L1|L2|...)GROUP} matched at {@code at} (where the first of the literals' occurrences
     * in the text starts, so no match starts earlier): the literals tried in the pattern's order, each followed
     * by its group's shape ({@code jvm_parser.GROUP_SHAPES}). UNSURE_TEXT when none matches there: the regex
     * goes on from there.
     */
    static String literalGroup(String s, int at, String[] literals, int shape, int[] end) {
        int n = s.length();
        for (String lit : literals) {
            if (!s.startsWith(lit, at)) continue;
            int q = at + lit.length(), j = q;
            if (shape == 1 && j < n && s.charAt(j) == '-') j++;  // (-?\d+)
            if (shape == 1 || shape == 2) {  // (-?\d+) or (\d+)
                int digits = j;
                while (j < n && isAsciiDigit(s.charAt(j))) j++;
                if (j > digits) {
                    end[0] = j;
                    return s.substring(q, j);
                }
                continue;  // for (-?\d+), "-" then no digit: -? gives the "-" back, and \d+ fails at it
            }
            // ([\d, ]*\d|): the longest run of digits, commas and spaces, cut after its last digit; else ""
            int last = q;
            for (; j < n; j++) {
                char ch = s.charAt(j);
                if (isAsciiDigit(ch)) last = j + 1;
                else if (ch != ',' && ch != ' ') break;
            }
            end[0] = last;
            return s.substring(q, last);
        }
        return UNSURE_TEXT;
    }

    /** Where the first of prefixes occurs in text, or -1. */
    private static int firstOf(String[] prefixes, String text) {
        int first = -1;
        for (String p : prefixes) {
            int at = text.indexOf(p);
            if (at >= 0 && (first < 0 || at < first)) first = at;
        }
        return first;
    }

    /** {@code m.find()} on text, starting at the first of the pattern's literal prefixes (none: no match). */
    private static boolean find(Matcher m, String[] prefixes, String text) {
        if (prefixes.length == 0) return m.reset(text).find();
        int first = -1;
        for (String p : prefixes) {
            int at = text.indexOf(p);
            if (at >= 0 && (first < 0 || at < first)) first = at;
        }
        return first >= 0 && m.reset(text).find(first);
    }

    /** Whether a match can start body: one of the pattern's literal prefixes does (none known: it can). */
    private static boolean mayStart(String body, String[] starts) {
        return starts.length == 0 || startsWithAny(body, starts);
    }

    private static boolean startsWithAny(String body, String[] starts) {
        for (String s : starts) if (body.startsWith(s)) return true;
        return false;
    }

    private static boolean truthy(Object value) {
        if (value == null) return false;
        if (value instanceof String) return !((String) value).isEmpty();
        if (value instanceof Boolean) return (Boolean) value;
        if (value instanceof Long) return (Long) value != 0;
        return true;
    }

    private static Object or(String first, Object second) {
        return first != null && !first.isEmpty() ? first : second;
    }

    /** Values into row as their columns' types; returns the reason of the first field out of int32 range, or null. */
    private String typed(Object[] values, Object[] row) {
        String bad = null;
        Object tp = values[fTp];
        values[fTp] = null;
        if (truthy(tp) && values[fTopic] == null) {
            String text = String.valueOf(tp);
            int cut = plain ? plainTpCut(text) : UNSURE;
            if (cut >= 0) {
                values[fTopic] = text.substring(0, cut);
                values[fPartition] = text.substring(cut + 1);
            } else {
                Matcher m = plain ? tpSplitP : tpSplit;
                if (m.reset(text).lookingAt()) {
                    values[fTopic] = m.group(1);
                    values[fPartition] = m.group(2);
                }
            }
        }
        Object topics = values[fTopics];
        if (truthy(topics) && values[fTopic] == null && !String.valueOf(topics).contains(",")) {
            values[fTopic] = topics;
        }
        for (int f = 0; f < nFields; f++) {
            Object v = values[f];
            if (v == null) continue;
            if (intField[f]) {
                v = plain ? plainInt(String.valueOf(v)) : toInt(String.valueOf(v));
                if (v == null && bad == null) bad = badField(f);
            } else if (listField[f]) {
                List<Integer> ints = new ArrayList<>();
                String text = String.valueOf(v);
                if (plain) {
                    plainInts(text, ints);
                } else {
                    Matcher m = intList.reset(text);
                    while (m.find()) ints.add(toInt(m.group()));
                }
                if (ints.contains(null) && bad == null) bad = badField(f);
                v = ints.toArray(new Integer[0]);
            } else if (lowerField[f]) {
                v = String.valueOf(v).toLowerCase(Locale.ROOT);
            }
            if (fieldCol[f] >= 0) row[fieldCol[f]] = v;
        }
        return bad;
    }

    /**
     * TP_SPLIT ({@code ^\[?(.+)[,-](\d+)\]?$}) on a plain tp that does not start with "[" and ends with a
     * digit: the greedy {@code .+} gives back the least it can, so the cut is the "-" or "," just before the
     * trailing digits (with at least one character before it). Returns the cut's index, or UNSURE.
     */
    static int plainTpCut(String tp) {
        int n = tp.length();
        if (n == 0 || tp.charAt(0) == '[') return UNSURE;
        int j = n;
        while (j > 0 && tp.charAt(j - 1) >= '0' && tp.charAt(j - 1) <= '9') j--;
        if (j == n || j < 2 || (tp.charAt(j - 1) != '-' && tp.charAt(j - 1) != ',')) return UNSURE;
        return j - 1;
    }

    /** INT_LIST ({@code -?\d+}) findall on plain text, each through {@link #plainInt}. */
    static void plainInts(String s, List<Integer> out) {
        int n = s.length();
        for (int i = 0; i < n; ) {
            char ch = s.charAt(i);
            int from = ch == '-' && i + 1 < n && isAsciiDigit(s.charAt(i + 1)) ? i + 1 : isAsciiDigit(ch) ? i : -1;
            if (from < 0) {
                i++;
                continue;
            }
            int j = from;
            while (j < n && isAsciiDigit(s.charAt(j))) j++;
            out.add(plainInt(s.substring(i, j)));
            i = j;
        }
    }

    private static boolean isAsciiDigit(char ch) {
        return ch >= '0' && ch <= '9';
    }

    /** {@link #toInt} of an optional "-" and up to 9 ASCII digits, without parsing twice; else toInt itself. */
    static Integer plainInt(String s) {
        int n = s.length(), i = n > 0 && s.charAt(0) == '-' ? 1 : 0;
        if (n == i || n - i > 9) return toInt(s);
        int value = 0;
        for (int k = i; k < n; k++) {
            char ch = s.charAt(k);
            if (ch < '0' || ch > '9') return toInt(s);
            value = value * 10 + (ch - '0');
        }
        return i == 1 ? -value : value;
    }

    private static final BigInteger INT_MIN = BigInteger.valueOf(Integer.MIN_VALUE);
    private static final BigInteger INT_MAX = BigInteger.valueOf(Integer.MAX_VALUE);

    /** Python's int() of a regex-matched decimal, kept only in int32 range (as Spark's try_cast); else null. */
    private static Integer toInt(String digits) {
        try {
            return Integer.valueOf(Integer.parseInt(digits));
        } catch (NumberFormatException e) {
            try {
                BigInteger big = new BigInteger(digits);
                return big.compareTo(INT_MIN) >= 0 && big.compareTo(INT_MAX) <= 0 ? big.intValue() : null;
            } catch (NumberFormatException e2) {
                return null;
            }
        }
    }

    // ---- timestamps -------------------------------------------------------------------------------------

    /** ms since epoch as Python's datetime.fromisoformat computes it, or Long.MIN_VALUE where it raises. */
    static long tsToMs(String date, String clock, String millis, String zone) {
        int year = ascii(date, 0, 4), month = ascii(date, 5, 2), day = ascii(date, 8, 2);
        int hour = ascii(clock, 0, 2), minute = ascii(clock, 3, 2), second = ascii(clock, 6, 2);
        if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)
                || hour > 23 || minute > 59 || second > 59) {
            return Long.MIN_VALUE;
        }
        long offsetMinutes = 0;
        if (zone != null && !zone.equals("Z")) {
            int hh = ascii(zone, 1, 2), mm = ascii(zone, zone.length() - 2, 2);
            if (hh < 0 || mm < 0) return Long.MIN_VALUE;
            offsetMinutes = hh * 60L + mm;
            if (offsetMinutes >= 24 * 60) return Long.MIN_VALUE;
            if (zone.charAt(0) == '-') offsetMinutes = -offsetMinutes;
        }
        long days = java.time.LocalDate.of(year, month, day).toEpochDay();
        long ms = ((days * 24 + hour) * 60 + minute) * 60_000L + second * 1000L - offsetMinutes * 60_000L;
        if (millis != null) {
            int value = 0;
            for (int i = 0; i < millis.length(); i++) value = value * 10 + Character.digit(millis.charAt(i), 10);
            ms += value;
        }
        return ms;
    }

    /** s[start, start+length) as an ASCII decimal (fromisoformat rejects other digits), or -1 (also out of range). */
    private static int ascii(String s, int start, int length) {
        if (start < 0 || start + length > s.length()) return -1;
        int value = 0;
        for (int i = start; i < start + length; i++) {
            char ch = s.charAt(i);
            if (ch < '0' || ch > '9') return -1;
            value = value * 10 + (ch - '0');
        }
        return value;
    }

    private static int daysIn(int year, int month) {
        return java.time.YearMonth.of(year, month).lengthOfMonth();
    }

    // ---- text -------------------------------------------------------------------------------------------

    /** Python's rstrip("\r\n"). */
    static String rstripNewlines(String s) {
        int end = s.length();
        while (end > 0 && (s.charAt(end - 1) == '\n' || s.charAt(end - 1) == '\r')) end--;
        return end == s.length() ? s : s.substring(0, end);
    }

    /** Python's s[:n]: n code points, not UTF-16 units. */
    static String truncate(String s, int n) {
        if (s == null || s.length() <= n) return s;
        if (s.codePointCount(0, s.length()) <= n) return s;
        return s.substring(0, s.offsetByCodePoints(0, n));
    }

    /** Strict UTF-8 (as Python's codec: no surrogates, no overlongs, nothing above U+10FFFF); null if invalid. */
    static String decode(byte[] b, int start, int end) {
        int i = start;
        while (i < end && b[i] >= 0) i++;
        if (i == end) return new String(b, start, end - start, StandardCharsets.ISO_8859_1);
        StringBuilder out = new StringBuilder(end - start);
        out.append(new String(b, start, i - start, StandardCharsets.ISO_8859_1));
        while (i < end) {
            int n = sequence(b, i, end);
            if (n <= 0) return null;
            out.append(new String(b, i, n, StandardCharsets.UTF_8));
            i += n;
        }
        return out.toString();
    }

    /** Python's {@code bytes.decode("utf-8", "backslashreplace")}: every byte of an invalid sequence as \xNN. */
    static String escaped(byte[] b, int start, int end) {
        StringBuilder out = new StringBuilder(end - start + 16);
        int i = start;
        while (i < end) {
            int n = sequence(b, i, end);
            if (n <= 0) {
                out.append(String.format("\\x%02x", b[i] & 0xff));
                i++;
            } else {
                out.append(new String(b, i, n, StandardCharsets.UTF_8));
                i += n;
            }
        }
        return out.toString();
    }

    /** Length of the valid UTF-8 sequence starting at b[i], or 0. */
    private static int sequence(byte[] b, int i, int end) {
        int lead = b[i] & 0xff;
        if (lead < 0x80) return 1;
        int n;
        int lo = 0x80, hi = 0xbf;
        if (lead >= 0xc2 && lead <= 0xdf) {
            n = 2;
        } else if (lead >= 0xe0 && lead <= 0xef) {
            n = 3;
            if (lead == 0xe0) lo = 0xa0;
            if (lead == 0xed) hi = 0x9f;
        } else if (lead >= 0xf0 && lead <= 0xf4) {
            n = 4;
            if (lead == 0xf0) lo = 0x90;
            if (lead == 0xf4) hi = 0x8f;
        } else {
            return 0;
        }
        if (i + n > end) return 0;
        int second = b[i + 1] & 0xff;
        if (second < lo || second > hi) return 0;
        for (int k = 2; k < n; k++) {
            int cont = b[i + k] & 0xff;
            if (cont < 0x80 || cont > 0xbf) return 0;
        }
        return n;
    }
}
