/** The wire shape of a custom hostname configuration (UpdateCustomHostnameResponse). */
import type { HostnameRecord } from './hostname-store.js';
import { isVerified } from './state-machine.js';

export interface CustomHostnameResponse {
  status: string;
  custom_hostname: string;
  data: {
    success: boolean;
    errors: unknown[];
    messages: unknown[];
    result: {
      id: string;
      hostname: string;
      ssl: {
        status: string;
        validation_records: Array<{ txt_name: string; txt_value: string }>;
        validation_errors?: Array<{ message: string }>;
      };
      ownership_verification: { type: string; name: string; value: string };
      custom_origin_server: string;
      verification_errors?: string[];
      status: string;
      created_at: string;
    };
  };
}

export function hostnameResponse(r: HostnameRecord): CustomHostnameResponse {
  const verified = isVerified(r.status);
  const ssl: CustomHostnameResponse['data']['result']['ssl'] = {
    status: verified ? 'active' : 'pending_validation',
    validation_records: verified ? [] : [{ txt_name: r.txtName, txt_value: r.txtValue }],
  };
  if (r.verificationErrors.length)
    ssl.validation_errors = r.verificationErrors.map((message) => ({ message }));
  const result: CustomHostnameResponse['data']['result'] = {
    id: r.id,
    hostname: r.hostname,
    ssl,
    ownership_verification: { type: 'txt', name: r.txtName, value: r.txtValue },
    custom_origin_server: r.originServer,
    status: verified ? 'active' : 'pending',
    created_at: r.createdAt.toISOString(),
  };
  if (r.verificationErrors.length) result.verification_errors = r.verificationErrors;
  return {
    status: r.status,
    custom_hostname: r.hostname,
    data: { success: true, errors: [], messages: [], result },
  };
}
