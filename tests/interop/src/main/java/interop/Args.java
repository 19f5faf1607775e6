package interop;

/** Command-line parsing helpers; every error names the argument and the bad value. */
final class Args
{
    private Args()
    {
    }

    /** The value following option {@code name} at {@code index}. */
    static String value(final String[] args, final int index, final String name)
    {
        if (index >= args.length)
        {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return args[index];
    }

    /** An int in [min, max]. */
    static int intIn(final String name, final String text, final int min, final int max)
    {
        final int value;
        try
        {
            value = Integer.parseInt(text);
        }
        catch (final NumberFormatException e)
        {
            throw new IllegalArgumentException(name + ": not an integer: '" + text + "'");
        }
        if (value < min || value > max)
        {
            throw new IllegalArgumentException(name + ": " + value + " not in [" + min + ", " + max + "]");
        }
        return value;
    }

    /** A UDP port in [1, 65535]. */
    static int port(final String name, final String text)
    {
        return intIn(name, text, 1, 65535);
    }

    /** A number in (0, max]. */
    static double positiveDouble(final String name, final String text, final double max)
    {
        final double value;
        try
        {
            value = Double.parseDouble(text);
        }
        catch (final NumberFormatException e)
        {
            throw new IllegalArgumentException(name + ": not a number: '" + text + "'");
        }
        if (!(value > 0) || !(value <= max))
        {
            throw new IllegalArgumentException(name + ": must be in (0, " + max + "], got '" + text + "'");
        }
        return value;
    }
}
