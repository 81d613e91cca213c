package benchrun.common;

/**
 * The string manipulation of {@code GET /strings?s=} (seed 4: the original's microservice did
 * "just string manipulation" without naming it): reverse {@code s}, upper-case the reversed
 * text, and concatenate it with the original around a {@code |}. Go's stack does the same
 * (stacks/go-nethttp/strings.go); both answer {@code {"output":"...","length":N}}.
 */
public final class Strings {
    /** The text used when {@code ?s=} is absent. */
    public static final String DEFAULT_INPUT = "Hello, People";
    /** Longest accepted {@code ?s=}. */
    public static final int MAX_LEN = 256;

    private Strings() {}

    /** Whether {@code s} is 1 to {@link #MAX_LEN} printable ASCII characters (space to '~'). */
    public static boolean valid(String s) {
        if (s == null || s.isEmpty() || s.length() > MAX_LEN) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    /** reverse(s).toUpperCase() + "|" + s, for printable ASCII {@code s}. */
    public static String manipulate(String s) {
        StringBuilder out = new StringBuilder(2 * s.length() + 1);
        for (int i = s.length() - 1; i >= 0; i--) {
            char c = s.charAt(i);
            out.append(c >= 'a' && c <= 'z' ? (char) (c - 32) : c);
        }
        return out.append('|').append(s).toString();
    }

    /** The JSON answer for {@code s}: {@code {"output":"...","length":N}}. */
    public static String answer(String s) {
        String output = manipulate(s);
        return "{\"output\":\"" + Json.escape(output) + "\",\"length\":" + output.length() + "}";
    }

    /** Self-check, run by hand ({@code java -cp <classes> benchrun.common.Strings}). */
    public static void main(String[] args) {
        String got = answer(DEFAULT_INPUT);
        String want = "{\"output\":\"ELPOEP ,OLLEH|Hello, People\",\"length\":27}";
        if (!got.equals(want) || valid("") || valid("é") || !valid("a \"q\"")) {
            throw new AssertionError("strings self-check: " + got);
        }
        System.out.println("strings self-check ok: " + got);
    }
}
