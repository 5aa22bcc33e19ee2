// The announcements feature's query keys, general to specific: what a session shows, what a lab sent.
export const announcementKeys = {
  all: ["announcements"] as const,
  ofSession: (sessionId: string) => [...announcementKeys.all, "session", sessionId] as const,
  ofLab: (labId: string) => [...announcementKeys.all, "lab", labId] as const,
};
