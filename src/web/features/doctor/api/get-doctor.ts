import { queryOptions, useQuery } from "@tanstack/react-query";
import { DoctorReport } from "../../../../common/operations-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { doctorKeys } from "./doctor-keys.ts";

export function getDoctorReport(signal?: AbortSignal): Promise<DoctorReport> {
  return apiRequest("/doctor", { schema: DoctorReport, signal });
}

export const doctorQueryOptions = () =>
  queryOptions({
    queryKey: doctorKeys.all,
    queryFn: ({ signal }) => getDoctorReport(signal),
    // A run asks the cluster dozens of questions: only on opening the page and on "Run again".
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    retry: false,
  });

export function useDoctorReport() {
  return useQuery(doctorQueryOptions());
}
