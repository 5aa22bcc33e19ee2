import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ScheduledClass, type NewClass } from "../../../../common/classes-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { classKeys } from "./class-keys.ts";

export function scheduleClass(input: NewClass): Promise<ScheduledClass> {
  return apiRequest("/classes", { method: "POST", body: input, schema: ScheduledClass });
}

export function cancelClass(id: string): Promise<void> {
  return apiRequest(`/classes/${encodeURIComponent(id)}`, { method: "DELETE" });
}

function useClassChange<Input, Output>(change: (input: Input) => Promise<Output>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: change,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: classKeys.all }),
  });
}

export const useScheduleClass = () => useClassChange(scheduleClass);
export const useCancelClass = () => useClassChange(cancelClass);
