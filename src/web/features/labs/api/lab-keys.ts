export const labKeys = {
  all: ["labs"] as const,
  list: () => [...labKeys.all, "list"] as const,
};
