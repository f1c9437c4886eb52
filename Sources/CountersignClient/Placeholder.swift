enum _CountersignClientPlaceholder {}
