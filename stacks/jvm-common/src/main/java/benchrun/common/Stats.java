package benchrun.common;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The request counters behind {@code GET /stats} (see stacks/CONTRACT.md): a total, one counter
 * per endpoint (all five keys always present) and one per value of the {@code X-Benchrun-Cell}
 * request header. Exact under concurrency: every counter is a {@link LongAdder}.
 */
public final class Stats {
    /** The request header the benchrun operator sets on every load request of a cell. */
    public static final String CELL_HEADER = "X-Benchrun-Cell";
    /** Most distinct tags kept; further new tags count under {@link #OVERFLOW_TAG}. */
    public static final int MAX_TAGS = 4096;
    /** Longest tag kept as is; longer values count under {@link #OVERFLOW_TAG}. */
    public static final int MAX_TAG_LEN = 253;
    public static final String OVERFLOW_TAG = "_overflow";

    public static final int HELLO = 0, COMPUTE = 1, ITEMS = 2, DOCS = 3, OTHER = 4;
    private static final String[] KEYS = {"/hello", "/compute", "/items", "/docs", "other"};

    private final LongAdder total = new LongAdder();
    private final LongAdder[] paths = new LongAdder[KEYS.length];
    private final ConcurrentHashMap<String, LongAdder> tags = new ConcurrentHashMap<>();
    private final AtomicInteger distinctTags = new AtomicInteger();
    private final LongAdder overflow = new LongAdder();

    public Stats() {
        for (int i = 0; i < paths.length; i++) {
            paths[i] = new LongAdder();
        }
    }

    /** Counts one served request of endpoint {@code path} (HELLO..OTHER) with tag {@code tag} (may be null). */
    public void record(int path, String tag) {
        total.increment();
        paths[path].increment();
        if (tag != null) {
            tagCounter(tag).increment();
        }
    }

    private LongAdder tagCounter(String tag) {
        if (tag.length() > MAX_TAG_LEN || OVERFLOW_TAG.equals(tag)) {
            return overflow;
        }
        LongAdder counter = tags.get(tag);
        if (counter == null) {
            // The mapping function runs at most once per new key, so a slot is reserved exactly
            // once per distinct tag held; when none is left the key stays absent.
            counter = tags.computeIfAbsent(tag, k -> reserveTagSlot() ? new LongAdder() : null);
            if (counter == null) {
                return overflow;
            }
        }
        return counter;
    }

    private boolean reserveTagSlot() {
        while (true) {
            int held = distinctTags.get();
            if (held >= MAX_TAGS) {
                return false;
            }
            if (distinctTags.compareAndSet(held, held + 1)) {
                return true;
            }
        }
    }

    /** The {@code /stats} document as ordered maps, ready for a JSON serializer. */
    public Map<String, Object> snapshot() {
        Map<String, Long> pathCounts = new LinkedHashMap<>();
        for (int i = 0; i < KEYS.length; i++) {
            pathCounts.put(KEYS[i], paths[i].sum());
        }
        Map<String, Long> tagCounts = new LinkedHashMap<>();
        tags.forEach((tag, n) -> tagCounts.put(tag, n.sum()));
        long overflowed = overflow.sum();
        if (overflowed > 0) {
            tagCounts.put(OVERFLOW_TAG, overflowed);
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("requests", total.sum());
        doc.put("paths", pathCounts);
        doc.put("tags", tagCounts);
        return doc;
    }

    /** The {@code /stats} document: {"requests":N,"paths":{...},"tags":{...}}. */
    public String toJson() {
        StringBuilder out = new StringBuilder(256 + 32 * tags.size());
        out.append("{\"requests\":").append(total.sum()).append(",\"paths\":{");
        for (int i = 0; i < KEYS.length; i++) {
            out.append(i == 0 ? "\"" : ",\"").append(KEYS[i]).append("\":").append(paths[i].sum());
        }
        out.append("},\"tags\":{");
        boolean first = true;
        for (var e : tags.entrySet()) {
            out.append(first ? "\"" : ",\"").append(Json.escape(e.getKey())).append("\":").append(e.getValue().sum());
            first = false;
        }
        long overflowed = overflow.sum();
        if (overflowed > 0) {
            out.append(first ? "\"" : ",\"").append(OVERFLOW_TAG).append("\":").append(overflowed);
        }
        return out.append("}}").toString();
    }
}
