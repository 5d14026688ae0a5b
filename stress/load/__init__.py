"""Load: concurrent clients reading published runs while other runs execute."""
