import { queryOptions, useQuery } from "@tanstack/react-query";
import { ClassList } from "../../../../common/classes-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { classKeys } from "./class-keys.ts";

export function getClasses(signal?: AbortSignal): Promise<ClassList> {
  return apiRequest("/classes", { schema: ClassList, signal });
}

export function useClasses() {
  return useQuery(
    queryOptions({
      queryKey: classKeys.all,
      queryFn: ({ signal }) => getClasses(signal),
      // The pool's counts move as VMs boot and students claim them; the pool looks every 5 s.
      refetchInterval: 5_000,
    }),
  );
}
