package benchrun.common;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The request counters behind {@code GET /stats} (see stacks/CONTRACT.md): a total, one counter
 * per endpoint (all five keys always present) and one per value of the {@code X-Benchrun-Cell}
 * request header. Exact under concurrency: every counter is a 64-bit atomic add.
 *
 * <p>The counters live in a file mapped into memory, {@code /dev/shm/benchrun-stats} by default
 * ({@code STATS_FILE}; empty for none). {@code /dev/shm} belongs to the pod, not to the container,
 * so a container that is OOM-killed and restarted continues the counts of the one before: the
 * requests it had counted when it was killed are not lost. Without a usable file the counters are
 * kept in memory only.
 */
public final class Stats {
    /** The request header the benchrun operator sets on every load request of a cell. */
    public static final String CELL_HEADER = "X-Benchrun-Cell";
    /** Most distinct tags kept; further new tags count under {@link #OVERFLOW_TAG}. */
    public static final int MAX_TAGS = 4096;
    /** Longest tag kept as is; longer values count under {@link #OVERFLOW_TAG}. */
    public static final int MAX_TAG_LEN = 253;
    public static final String OVERFLOW_TAG = "_overflow";
    /** Where the counters are kept unless {@code STATS_FILE} says otherwise. */
    public static final String DEFAULT_FILE = "/dev/shm/benchrun-stats";

    public static final int HELLO = 0, COMPUTE = 1, ITEMS = 2, DOCS = 3, OTHER = 4;
    private static final String[] KEYS = {"/hello", "/compute", "/items", "/docs", "other"};

    // Layout (native byte order): magic, total, the five paths, overflow, tag count (longs),
    // then MAX_TAGS slots of [count (long), UTF-8 length (long), tag bytes].
    private static final long MAGIC = 0x62656e6368737431L; // "benchst1"
    private static final int TOTAL = 8, PATHS = 16, OVERFLOW = PATHS + 8 * 5, TAG_COUNT = OVERFLOW + 8;
    private static final int HEADER = TAG_COUNT + 8;
    /** A slot: the counter, the tag's length, and up to 4 bytes per character of the tag. */
    private static final int SLOT = 16 + ((4 * MAX_TAG_LEN + 7) / 8) * 8;
    private static final int SIZE = HEADER + MAX_TAGS * SLOT;
    private static final VarHandle LONG =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final ByteBuffer buf;
    /** Tag to the offset of its slot's counter. */
    private final ConcurrentHashMap<String, Integer> tags = new ConcurrentHashMap<>();
    /** Where the counters are kept, or null when in memory only. */
    private final Path file;

    /** Counters in the file {@code STATS_FILE} names (default {@link #DEFAULT_FILE}). */
    public Stats() {
        this(fileFromEnv());
    }

    /** Counters in {@code file} (continuing what it holds), or in memory only when null. */
    public Stats(Path file) {
        ByteBuffer mapped = null;
        if (file != null) {
            try {
                mapped = map(file);
            } catch (IOException | RuntimeException e) {
                System.err.println("stats: counting in memory only, " + file + " is unusable: " + e);
            }
        }
        this.file = mapped == null ? null : file;
        buf = mapped != null ? mapped : ByteBuffer.allocateDirect(SIZE).order(ByteOrder.nativeOrder());
        if ((long) LONG.getVolatile(buf, 0) != MAGIC) {
            for (int i = 0; i < SIZE; i += 8) {
                LONG.set(buf, i, 0L);
            }
            LONG.setVolatile(buf, 0, MAGIC);
        }
        long held = Math.min((long) LONG.getVolatile(buf, TAG_COUNT), MAX_TAGS);
        for (int i = 0; i < held; i++) {
            int slot = HEADER + i * SLOT;
            tags.put(readTag(slot), slot);
        }
    }

    private static Path fileFromEnv() {
        String f = System.getenv().getOrDefault("STATS_FILE", DEFAULT_FILE);
        return f.isEmpty() ? null : Path.of(f);
    }

    private static ByteBuffer map(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, SIZE).order(ByteOrder.nativeOrder());
        }
    }

    /** The file the counters are kept in, or null when they are in memory only. */
    public Path file() {
        return file;
    }

    /** Counts one served request of endpoint {@code path} (HELLO..OTHER) with tag {@code tag} (may be null). */
    public void record(int path, String tag) {
        LONG.getAndAdd(buf, TOTAL, 1L);
        LONG.getAndAdd(buf, PATHS + 8 * path, 1L);
        if (tag != null) {
            LONG.getAndAdd(buf, tagCounter(tag), 1L);
        }
    }

    private int tagCounter(String tag) {
        if (tag.length() > MAX_TAG_LEN || OVERFLOW_TAG.equals(tag)) {
            return OVERFLOW;
        }
        Integer slot = tags.get(tag);
        return slot != null ? slot : newTag(tag);
    }

    /** A slot for a tag not seen yet; one writer at a time, readers see it once it is whole. */
    private synchronized int newTag(String tag) {
        Integer slot = tags.get(tag);
        if (slot != null) {
            return slot;
        }
        long held = (long) LONG.getVolatile(buf, TAG_COUNT);
        if (held >= MAX_TAGS) {
            return OVERFLOW;
        }
        int at = HEADER + (int) held * SLOT;
        byte[] bytes = tag.getBytes(StandardCharsets.UTF_8);
        LONG.set(buf, at, 0L);
        LONG.set(buf, at + 8, (long) bytes.length);
        buf.put(at + 16, bytes);
        LONG.setVolatile(buf, TAG_COUNT, held + 1);
        tags.put(tag, at);
        return at;
    }

    private String readTag(int slot) {
        int len = (int) Math.min(Math.max((long) LONG.get(buf, slot + 8), 0), SLOT - 16);
        byte[] bytes = new byte[len];
        buf.get(slot + 16, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private long read(int offset) {
        return (long) LONG.getVolatile(buf, offset);
    }

    /** Settings the stack reports under {@code runtime} besides the processor count. */
    private final Map<String, Object> settings = new java.util.concurrent.ConcurrentSkipListMap<>();

    /**
     * Reports a setting the stack was sized by under {@code runtime} in {@code /stats} (e.g.
     * Tomcat's {@code maxThreads}); {@code value} is a number or a string.
     */
    public void describe(String key, Object value) {
        settings.put(key, value);
    }

    /**
     * The {@code runtime} object of {@code /stats}: the processors the JVM uses (from
     * {@code -XX:ActiveProcessorCount}, which the launcher derives from the CPU limit), the CPU
     * limit it was given ({@code BENCHRUN_CPU_LIMIT_MILLICORES}, null without one), then the
     * stack's own settings in key order.
     */
    public Map<String, Object> runtime() {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("availableProcessors", Runtime.getRuntime().availableProcessors());
        doc.put("cpuLimitMillicores", cpuLimitMillicores(System.getenv("BENCHRUN_CPU_LIMIT_MILLICORES")));
        doc.putAll(settings);
        return doc;
    }

    /** A CPU limit in millicores from its variable, or null when unset or not a positive integer. */
    static Long cpuLimitMillicores(String raw) {
        if (raw == null || !raw.matches("[0-9]{1,12}")) {
            return null;
        }
        long milli = Long.parseLong(raw);
        return milli > 0 ? milli : null;
    }

    /** The {@code /stats} document as ordered maps, ready for a JSON serializer. */
    public Map<String, Object> snapshot() {
        Map<String, Long> pathCounts = new LinkedHashMap<>();
        for (int i = 0; i < KEYS.length; i++) {
            pathCounts.put(KEYS[i], read(PATHS + 8 * i));
        }
        Map<String, Long> tagCounts = new LinkedHashMap<>();
        tags.forEach((tag, slot) -> tagCounts.put(tag, read(slot)));
        long overflowed = read(OVERFLOW);
        if (overflowed > 0) {
            tagCounts.put(OVERFLOW_TAG, overflowed);
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("requests", read(TOTAL));
        doc.put("paths", pathCounts);
        doc.put("tags", tagCounts);
        doc.put("runtime", runtime());
        return doc;
    }

    /** The {@code /stats} document: {"requests":N,"paths":{...},"tags":{...},"runtime":{...}}. */
    public String toJson() {
        StringBuilder out = new StringBuilder(256 + 32 * tags.size());
        out.append("{\"requests\":").append(read(TOTAL)).append(",\"paths\":{");
        for (int i = 0; i < KEYS.length; i++) {
            out.append(i == 0 ? "\"" : ",\"").append(KEYS[i]).append("\":").append(read(PATHS + 8 * i));
        }
        out.append("},\"tags\":{");
        boolean first = true;
        for (var e : tags.entrySet()) {
            out.append(first ? "\"" : ",\"").append(Json.escape(e.getKey())).append("\":").append(read(e.getValue()));
            first = false;
        }
        long overflowed = read(OVERFLOW);
        if (overflowed > 0) {
            out.append(first ? "\"" : ",\"").append(OVERFLOW_TAG).append("\":").append(overflowed);
        }
        out.append("},\"runtime\":{");
        first = true;
        for (var e : runtime().entrySet()) {
            out.append(first ? "\"" : ",\"").append(Json.escape(e.getKey())).append("\":");
            Object v = e.getValue();
            if (v == null || v instanceof Number || v instanceof Boolean) {
                out.append(v);
            } else {
                out.append('"').append(Json.escape(v.toString())).append('"');
            }
            first = false;
        }
        return out.append("}}").toString();
    }

    /**
     * Self-check, run by hand ({@code java -cp <classes> benchrun.common.Stats}): counts survive
     * a second instance on the same file, tags included. In the cluster, make stacks-test checks
     * the same across a real container restart.
     */
    public static void main(String[] args) throws IOException {
        Path f = Files.createTempFile("benchrun-stats", ".bin");
        try {
            Stats a = new Stats(f);
            a.record(HELLO, "run/0/0");
            a.record(HELLO, "run/0/0");
            a.record(DOCS, "run/1/0");
            a.record(OTHER, null);
            Stats b = new Stats(f); // a restarted container
            b.record(HELLO, "run/0/0");
            String want = "{\"requests\":5,\"paths\":{\"/hello\":3,\"/compute\":0,\"/items\":0,\"/docs\":1,\"other\":1},\"tags\":{";
            String got = b.toJson();
            b.describe("maxThreads", 200);
            got = b.toJson();
            if (!got.startsWith(want) || !got.contains("\"run/0/0\":3") || !got.contains("\"run/1/0\":1")
                    || !got.contains("\"runtime\":{\"availableProcessors\":") || !got.endsWith(",\"maxThreads\":200}}")) {
                throw new AssertionError("stats self-check: " + got);
            }
            System.out.println("stats self-check ok: " + got);
        } finally {
            Files.deleteIfExists(f);
        }
    }
}
